"""
The floor for ``bench_serve.py``: a bare twisted.web server answering a fixed tool result.

No MCP, no dispatch, no query: one leaf Resource decodes each JSON-RPC POST and answers it
with a constant (a ``tools/call`` result, or an ``initialize`` result), access log off. It
speaks what the load client needs: ``/mcp`` in both protocol eras (notifications get 202)
and legacy HTTP+SSE (``GET /sse`` names a message endpoint whose POSTs answer 202 and send
the reply on the stream). What it costs per call is the least any twisted.web server pays
on this machine with this load client; the table's "x floor" column is measured against it.

Run as ``python scripts/bench_serve_floor.py PORT``.
"""

from __future__ import annotations

import itertools
import json
import sys

from twisted.internet import reactor
from twisted.web import resource, server

TOOL_RESULT = {"content": [{"type": "text", "text": "hello"}], "isError": False}
INITIALIZE_RESULT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "bench-floor", "version": "1"},
}


def reply_to(message: dict) -> bytes | None:
    """The JSON-RPC reply for one decoded request, or None for a notification."""
    if "id" not in message:
        return None
    result = INITIALIZE_RESULT if message.get("method") == "initialize" else TOOL_RESULT
    return json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()


class FloorMcp(resource.Resource):
    """``POST /mcp``: the reply in the response body."""

    isLeaf = True

    def render_POST(self, request):
        reply = reply_to(json.loads(request.content.read()))
        if reply is None:
            request.setResponseCode(202)
            return b""
        request.setHeader(b"content-type", b"application/json")
        return reply


class FloorSse(resource.Resource):
    """``GET /sse``: an event stream whose first event names this stream's message endpoint."""

    isLeaf = True

    def __init__(self, streams: dict) -> None:
        super().__init__()
        self._streams = streams
        self._ids = itertools.count(1)

    def render_GET(self, request):
        session = str(next(self._ids))
        self._streams[session] = request
        request.notifyFinish().addBoth(lambda _: self._streams.pop(session, None))
        request.setHeader(b"content-type", b"text/event-stream")
        request.setHeader(b"cache-control", b"no-cache")
        request.write(f"event: endpoint\ndata: /messages?sessionId={session}\n\n".encode())
        return server.NOT_DONE_YET


class FloorMessages(resource.Resource):
    """``POST /messages?sessionId=``: 202 here, the reply on the session's stream."""

    isLeaf = True

    def __init__(self, streams: dict) -> None:
        super().__init__()
        self._streams = streams

    def render_POST(self, request):
        stream = self._streams.get(request.args.get(b"sessionId", [b""])[0].decode())
        if stream is None:
            request.setResponseCode(404)
            return b""
        reply = reply_to(json.loads(request.content.read()))
        if reply is not None:
            stream.write(b"event: message\ndata: " + reply + b"\n\n")
        request.setResponseCode(202)
        return b""


def site() -> server.Site:
    streams: dict = {}
    root = resource.Resource()
    root.putChild(b"mcp", FloorMcp())
    root.putChild(b"sse", FloorSse(streams))
    root.putChild(b"messages", FloorMessages(streams))
    floor = server.Site(root, parsePOSTFormSubmission=False)
    floor.log = lambda request: None
    return floor


def main() -> None:
    reactor.listenTCP(int(sys.argv[1]), site(), interface="127.0.0.1")
    reactor.run()


if __name__ == "__main__":
    main()
