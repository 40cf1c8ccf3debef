"""The upstream backend proxies /api/v0 to a remote Eshu API over real loopback sockets."""

import json

import pytest_twisted
from twisted.internet import reactor, task
from twisted.web.resource import Resource
from twisted.web.server import NOT_DONE_YET, Site

from eshu_mcp.dispatch.inprocess import InProcessDispatcher
from eshu_mcp.query.upstream import UpstreamQueryBackend


class RemoteEshu(Resource):
    """Plays the remote Eshu API: answers /health and echoes what it was sent."""

    isLeaf = True

    def __init__(self):
        super().__init__()
        self.seen = []
        self.hanging = []

    def render(self, request):
        if request.path == b"/health":
            return b'{"status":"ok"}'
        body = request.content.read()
        self.seen.append(
            (request.method, request.uri, dict(request.requestHeaders.getAllRawHeaders()), body)
        )
        if b"/slow/" in request.path:
            request.notifyFinish().addErrback(lambda failure: self.hanging.append(failure))
            return NOT_DONE_YET
        request.setHeader(b"content-type", b"application/json")
        if b"/code/symbols/" in request.path:
            return json.dumps({"data": FULL_SYMBOL_ANSWER, "truth": None, "error": None}).encode()
        return json.dumps(
            {"data": {"path": request.path.decode()}, "truth": None, "error": None}
        ).encode()


SYMBOL_ROW = {
    "entity_id": "content-entity:e_1",
    "name": "Deferred",
    "entity_name": "Deferred",
    "file_path": "twisted/internet/defer.py",
    "relative_path": "twisted/internet/defer.py",
    "start_line": 382,
    "end_line": 1322,
    "repo_id": "repository:r_1",
    "repo_name": "twisted",
    "source_cache": "class Deferred:\n" + "    x = 1\n" * 900,
}
FULL_SYMBOL_ANSWER = {"results": [SYMBOL_ROW], "matches": [SYMBOL_ROW], "offset": 0}


@pytest_twisted.ensureDeferred
async def test_requests_are_forwarded_with_path_query_body_and_token():
    remote = RemoteEshu()
    port = reactor.listenTCP(0, Site(remote), interface="127.0.0.1")
    try:
        base = f"http://127.0.0.1:{port.getHost().port}"
        backend = UpstreamQueryBackend(base, reactor=reactor, token="upstream-secret")
        await backend.probe()
        assert backend.ready()
        dispatcher = InProcessDispatcher(backend.resource, reactor)
        result = await dispatcher.call("find_code", {"query": "main"}, b"Bearer client")
        assert result["structuredContent"]["data"] == {"path": "/api/v0/code/search"}
        method, uri, headers, body = remote.seen[0]
        assert (method, uri) == (b"POST", b"/api/v0/code/search")
        assert headers[b"Authorization"] == [b"Bearer upstream-secret"]
        assert headers[b"Accept"] == [b"application/eshu.envelope+json"]
        assert json.loads(body)["query"] == "main"
        result = await dispatcher.call("list_indexed_repositories", {"limit": 5})
        assert remote.seen[1][1] == b"/api/v0/repositories?limit=5&offset=0"
    finally:
        await port.stopListening()


@pytest_twisted.ensureDeferred
async def test_upstream_answers_are_compacted_in_dispatch_and_the_ask_is_forwarded():
    remote = RemoteEshu()
    port = reactor.listenTCP(0, Site(remote), interface="127.0.0.1")
    try:
        base = f"http://127.0.0.1:{port.getHost().port}"
        backend = UpstreamQueryBackend(base, reactor=reactor)
        dispatcher = InProcessDispatcher(backend.resource, reactor)
        result = await dispatcher.call("find_symbol", {"symbol": "Deferred"})
        data = result["structuredContent"]["data"]
        assert "matches" not in data
        (row,) = data["results"]
        assert row["source_cache"] == "class Deferred:"
        assert row["source_truncated"] is True
        assert row["entity_id"] == "content-entity:e_1"
        assert remote.seen[0][2][b"Eshu-Answer-Detail"] == [b"compact"]
        full = InProcessDispatcher(backend.resource, reactor, answer_detail="full")
        result = await full.call("find_symbol", {"symbol": "Deferred"})
        assert result["structuredContent"]["data"] == FULL_SYMBOL_ANSWER
        assert b"Eshu-Answer-Detail" not in remote.seen[1][2]
    finally:
        await port.stopListening()


@pytest_twisted.ensureDeferred
async def test_cancelled_call_cancels_the_upstream_request():
    remote = RemoteEshu()
    port = reactor.listenTCP(0, Site(remote), interface="127.0.0.1")
    try:
        base = f"http://127.0.0.1:{port.getHost().port}"
        backend = UpstreamQueryBackend(base, reactor=reactor)
        dispatcher = InProcessDispatcher(backend.resource, reactor, timeout=0.2)
        result = await dispatcher.call("get_repo_context", {"repo_id": "slow"})
        assert result["structuredContent"]["error"]["code"] == "mcp_dispatch_timeout"
        for _ in range(100):
            if remote.hanging:
                break
            await task.deferLater(reactor, 0.01, lambda: None)
        assert len(remote.hanging) == 1
    finally:
        await port.stopListening()


@pytest_twisted.ensureDeferred
async def test_unreachable_upstream_is_a_502_envelope_and_not_ready():
    port = reactor.listenTCP(0, Site(Resource()), interface="127.0.0.1")
    base = f"http://127.0.0.1:{port.getHost().port}"
    await port.stopListening()
    backend = UpstreamQueryBackend(base, reactor=reactor)
    await backend.probe()
    assert not backend.ready()
    result = await InProcessDispatcher(backend.resource, reactor).call("find_code", {"query": "x"})
    assert result["isError"] is True
    assert result["structuredContent"]["error"]["code"] == "backend_unavailable"
