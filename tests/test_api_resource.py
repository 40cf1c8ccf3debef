"""
Tests for the embedded ``/api/v0`` Resource: routing, rendering, bodies, cancellation.

Also home of the small helpers the other ``test_api_*`` modules share: an index built
row by row per ``schema.sql`` (:class:`ApiIndex`) and a real Resource driven through
``treq.testing.StubTreq`` (:class:`ApiClient`).
"""

from __future__ import annotations

import hashlib
import io
import json
import queue
import sqlite3
import threading
import weakref
from contextlib import closing
from pathlib import Path
from typing import Any

from treq.testing import StubTreq
from twisted.internet.task import Clock
from twisted.python.failure import Failure
from twisted.python.threadpool import ThreadPool
from twisted.trial.unittest import SynchronousTestCase
from twisted.web.resource import Resource
from twisted.web.server import NOT_DONE_YET, Request
from twisted.web.test.requesthelper import DummyChannel

from eshu_mcp.query.local.api.platform.framework import Answer, ApiError, RouteTable
from eshu_mcp.query.local.api.platform.resource import LocalQueryResource
from eshu_mcp.query.local.index.build.lock import WriterLock
from eshu_mcp.query.local.index.store.database import open_reader, open_writer
from eshu_mcp.query.local.index.store.search import index_stored_files

OBSERVED = "2026-12-02T10:00:00Z"
ENVELOPE = "application/eshu.envelope+json"


class ApiIndex:
    """A hand-built index: repositories with generations, files, entities, refs, facts."""

    def __init__(self, directory: str) -> None:
        self.root = Path(directory)
        self.root.mkdir(parents=True, exist_ok=True)
        self.path = str(self.root / "index.sqlite")
        self.writer = open_writer(self.path)
        self.live_writer: WriterLock | None = None

    def hold_writer_lock(self) -> None:
        """Stand in for a running indexer: a 'pending' generation is only live under it."""
        if self.live_writer is None:
            self.live_writer = WriterLock(Path(self.path), timeout=0).__enter__()
            weakref.finalize(self, self.live_writer.__exit__, None, None, None)

    def writer_died(self) -> None:
        """The indexer that wrote the 'pending' generations is gone (its lock went with it)."""
        if self.live_writer is not None:
            self.live_writer.__exit__(None, None, None)

    def repository(
        self,
        name: str,
        *,
        remote: str | None = None,
        head: str = "a" * 40,
        work_tree: Path | None = None,
        generations: tuple[str, ...] = ("active",),
    ) -> str:
        """Add a repository and its generations (seq 1..n); returns its id."""
        repo_id = "repository:r_" + hashlib.sha1(name.encode()).hexdigest()[:8]
        slug = remote.split("/", 3)[-1] if remote else None
        local = str(work_tree or (self.root / "trees" / name))
        Path(local).mkdir(parents=True, exist_ok=True)  # an indexed tree that still exists
        active = next(
            (f"gen-{name}-{seq}" for seq, s in enumerate(generations, 1) if s == "active"), None
        )
        self.writer.execute(
            "INSERT INTO repositories (repo_id, name, local_path, remote_url, repo_slug,"
            " has_remote, default_branch, head_commit, head_ref, active_generation_id, gen_seq,"
            " created_at, last_indexed_at) VALUES (?, ?, ?, ?, ?, ?, 'main', ?, 'main', ?, ?,"
            " ?, ?)",
            (
                repo_id,
                name,
                local,
                remote,
                slug,
                int(bool(remote)),
                head,
                active,
                len(generations),
                OBSERVED,
                OBSERVED,
            ),
        )
        if "pending" in generations:
            self.hold_writer_lock()
        for seq, status in enumerate(generations, start=1):
            generation_id = f"gen-{name}-{seq}"
            self.writer.execute(
                "INSERT INTO generations (generation_id, repo_id, seq, scope_id, status,"
                " freshness_hint, source_commit_sha, observed_at, ingested_at, activated_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    generation_id,
                    repo_id,
                    seq,
                    "git-repository-scope:" + repo_id,
                    status,
                    head,
                    head,
                    f"2026-12-02T10:0{seq}:00Z",
                    f"2026-12-02T10:0{seq}:00Z" if status != "pending" else None,
                    f"2026-12-02T10:0{seq}:05Z" if status in ("active", "superseded") else None,
                ),
            )
        return repo_id

    def file(
        self,
        repo_id: str,
        path: str,
        text: str,
        *,
        language: str | None = "python",
        status: str = "parsed",
    ) -> int:
        """Add a file row; returns its file id."""
        data = text.encode()
        cursor = self.writer.execute(
            "INSERT INTO files (repo_id, relative_path, language, content, content_hash,"
            " byte_size, line_count, commit_sha, parse_status, indexed_at, generation_id)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'gen')",
            (
                repo_id,
                path,
                language,
                text if status not in ("binary", "too_large") else "",
                hashlib.sha256(data).hexdigest(),
                len(data),
                text.count("\n") + (0 if text.endswith("\n") else 1) if text else 0,
                "a" * 40,
                status,
                OBSERVED,
            ),
        )
        return cursor.lastrowid

    def entity(
        self,
        file_id: int,
        entity_type: str,
        name: str,
        start: int,
        end: int,
        *,
        metadata: dict | None = None,
        class_context: str | None = None,
    ) -> str:
        """Add an entity whose byte span covers lines ``start..end``; returns its id."""
        row = self.writer.execute(
            "SELECT repo_id, relative_path, content, language FROM files WHERE file_id = ?",
            (file_id,),
        ).fetchone()
        lines = row["content"].encode().split(b"\n")
        start_byte = sum(len(line) + 1 for line in lines[: start - 1])
        end_byte = sum(len(line) + 1 for line in lines[:end]) - 1
        key = "\n".join(
            [row["repo_id"], row["relative_path"], entity_type.lower(), name, str(start)]
        )
        entity_id = "content-entity:e_" + hashlib.blake2s(key.encode()).hexdigest()[:12]
        self.writer.execute(
            "INSERT INTO entities (entity_id, repo_id, file_id, relative_path, entity_type,"
            " entity_name, start_line, end_line, start_byte, end_byte, language, class_context,"
            " metadata, generation_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'gen')",
            (
                entity_id,
                row["repo_id"],
                file_id,
                row["relative_path"],
                entity_type,
                name,
                start,
                end,
                start_byte,
                end_byte,
                row["language"],
                class_context,
                json.dumps(metadata or {}),
            ),
        )
        return entity_id

    def edge(self, repo_id: str, kind: str, source: str, target: str, line: int = 1) -> None:
        """Add a resolved edge."""
        self.writer.execute(
            "INSERT INTO edges (repo_id, type, source_id, target_id, resolution_method,"
            " confidence, line_number, generation_id) VALUES (?, ?, ?, ?, 'same_file', 0.95,"
            " ?, 'gen')",
            (repo_id, kind, source, target, line),
        )

    def ref(self, repo_id: str, name: str, kind: str, commit: str, *, head: bool = False) -> None:
        """Record a branch or tag."""
        self.writer.execute(
            "INSERT INTO repository_refs (repo_id, ref_name, ref_kind, commit_sha, is_head)"
            " VALUES (?, ?, ?, ?, ?)",
            (repo_id, name, kind, commit, int(head)),
        )

    def fact(self, repo_id: str, key: str, kind: str, digest: str, start: int, end=None, why=None):
        """Record one fact version live for generation seq in [start, end)."""
        self.writer.execute(
            "INSERT INTO fact_versions (repo_id, stable_fact_key, fact_kind, payload_hash,"
            " valid_from, valid_to, end_reason) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (repo_id, key, kind, digest, start, end, why),
        )

    def reader(self) -> sqlite3.Connection:
        """A read-only connection, as the Resource opens per call (search documents written)."""
        with closing(sqlite3.connect(self.path, isolation_level=None)) as conn:
            index_stored_files(conn)
        return open_reader(self.path)


class ThreadReactor(Clock):
    """A Clock whose ``callFromThread`` runs inline (results of the inline pool)."""

    def callFromThread(self, f, *args, **kwargs):
        f(*args, **kwargs)


class InlinePool:
    """A thread pool stand-in running each call at once on the calling thread."""

    def callInThreadWithCallback(self, on_result, func, *args, **kwargs):
        try:
            result = func(*args, **kwargs)
        except BaseException:
            on_result(False, Failure())
        else:
            on_result(True, result)


class Response:
    """A decoded response."""

    def __init__(self, status: int, headers: Any, body: bytes) -> None:
        self.status = status
        self.headers = headers
        self.body = body

    def header(self, name: str) -> str | None:
        values = self.headers.getRawHeaders(name)
        return values[0] if values else None

    def json(self) -> Any:
        return json.loads(self.body.decode("utf-8"))


def mount(resource: Resource) -> Resource:
    """A site root with ``resource`` at ``/api/v0/``, as the daemon mounts it."""
    root = Resource()
    api = Resource()
    root.putChild(b"api", api)
    api.putChild(b"v0", resource)
    return root


class ApiClient:
    """Drives a real :class:`LocalQueryResource` in memory through StubTreq."""

    def __init__(self, case: SynchronousTestCase, db_path: str, routes: RouteTable | None = None):
        self.case = case
        self.reactor = ThreadReactor()
        kwargs = {} if routes is None else {"routes": routes}
        self.resource = LocalQueryResource(
            db_path, reactor=self.reactor, threadpool=InlinePool(), **kwargs
        )
        self.stub = StubTreq(mount(self.resource))

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        envelope: bool = False,
        raw: bytes | None = None,
        params: dict | None = None,
    ) -> Response:
        headers = {b"accept": [ENVELOPE.encode() if envelope else b"application/json"]}
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        url = "http://127.0.0.1/api/v0" + path
        d = self.stub.request(method, url, headers=headers, data=data, params=params)
        self.stub.flush()
        response = self.case.successResultOf(d)
        content = self.stub.content(response)
        self.stub.flush()
        return Response(response.code, response.headers, self.case.successResultOf(content))

    def get(self, path: str, **kwargs: Any) -> Response:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, body: Any = None, **kwargs: Any) -> Response:
        return self.request("POST", path, body, **kwargs)


def small_index(case: SynchronousTestCase) -> tuple[ApiIndex, str]:
    """One repository with two Python files and a class."""
    index = ApiIndex(case.mktemp())
    repo = index.repository("payments", remote="https://github.com/acme/payments")
    service = index.file(repo, "app/service.py", "class PaymentService:\n    pass\n")
    index.entity(service, "Class", "PaymentService", 1, 2)
    index.file(repo, "app/api.py", "import app.service\n")
    index.writer.commit()
    return index, repo


# ---------------------------------------------------------------------- tests


class RoutingTests(SynchronousTestCase):
    def setUp(self):
        self.index, self.repo = small_index(self)
        self.client = ApiClient(self, self.index.path)

    def test_unknown_path_is_plain_json_404(self):
        response = self.client.get("/no/such/route", envelope=True)
        self.assertEqual(response.status, 404)
        self.assertEqual(response.header("content-type"), "application/json; charset=utf-8")
        self.assertEqual(response.json()["error"], "Not Found")
        self.assertIn("/api/v0/no/such/route", response.json()["detail"])

    def test_known_path_with_wrong_method_is_405_with_allow(self):
        response = self.client.post("/repositories", {})
        self.assertEqual(response.status, 405)
        self.assertEqual(response.header("allow"), "GET")
        self.assertEqual(response.json()["error"], "Method Not Allowed")

    def test_plain_answer_is_the_data_with_go_encoding(self):
        response = self.client.get("/repositories")
        self.assertEqual(response.status, 200)
        self.assertTrue(response.body.endswith(b"}\n"))
        self.assertNotIn(b": ", response.body)
        self.assertEqual(response.json()["repositories"][0]["name"], "payments")

    def test_envelope_is_sent_only_when_accepted(self):
        body = self.client.get("/repositories", envelope=True).json()
        self.assertEqual(list(body), ["data", "truth", "error"])
        self.assertIsNone(body["error"])
        self.assertEqual(body["truth"]["profile"], "local_lightweight")
        self.assertEqual(body["truth"]["basis"], "content_index")

    def test_status_routes_are_never_enveloped(self):
        body = self.client.get("/status/collectors", envelope=True).json()
        self.assertIn("collectors", body)
        self.assertNotIn("truth", body)

    def test_literal_segment_beats_path_parameter(self):
        response = self.client.get("/repositories/by-language", params={"language": "python"})
        self.assertEqual(response.status, 200)
        self.assertEqual(response.json()["repository_count"], 1)

    def test_percent_encoded_path_argument_is_decoded(self):
        encoded = self.repo.replace(":", "%3A")
        response = self.client.get(f"/repositories/{encoded}/stats")
        self.assertEqual(response.status, 200)
        self.assertEqual(response.json()["repository"]["id"], self.repo)

    def test_invalid_utf8_in_the_path_is_400(self):
        response = self.client.get("/repositories/%FF%FE/stats")
        self.assertEqual(response.status, 400)
        self.assertEqual(response.json()["detail"], "request path is not valid UTF-8")

    def test_html_characters_are_not_escaped(self):
        index = ApiIndex(self.mktemp())
        repo = index.repository("angle")
        index.file(repo, "a<b>&c.py", "x = 1\n")
        index.writer.commit()
        client = ApiClient(self, index.path)
        response = client.get(f"/repositories/{repo}/tree")
        self.assertIn(b'"a<b>&c.py"', response.body)


class BodyTests(SynchronousTestCase):
    def setUp(self):
        self.index, self.repo = small_index(self)
        self.client = ApiClient(self, self.index.path)

    def test_malformed_json_body_is_400_plain(self):
        response = self.client.post("/content/files/read", raw=b"{not json", envelope=True)
        self.assertEqual(response.status, 400)
        body = response.json()
        self.assertEqual(body["error"], "Bad Request")
        self.assertTrue(body["detail"].startswith("invalid JSON: invalid character"))

    def test_non_finite_numbers_are_invalid_json(self):
        for raw, detail in (
            (b'{"repo_id": "x", "limit": NaN}', "invalid character 'N'"),
            (b'{"repo_id": "x", "limit": -Infinity}', "invalid character '-'"),
            (b'{"repo_id": "x", "limit": 1e400}', "cannot unmarshal number 1e400"),
        ):
            with self.subTest(raw=raw):
                response = self.client.post("/content/files/read", raw=raw)
                self.assertEqual(response.status, 400)
                self.assertIn(detail, response.json()["detail"])

    def test_truncated_json_body_is_unexpected_eof(self):
        response = self.client.post("/content/files/read", raw=b'{"repo_id": "x"')
        self.assertEqual(response.json()["detail"], "invalid JSON: unexpected EOF")

    def test_missing_body_is_invalid_json_eof(self):
        response = self.client.post("/content/files/read")
        self.assertEqual(response.status, 400)
        self.assertEqual(response.json()["detail"], "invalid JSON: EOF")

    def test_array_body_is_refused(self):
        response = self.client.post("/content/files/read", [1, 2])
        self.assertEqual(response.status, 400)
        self.assertIn("cannot unmarshal array", response.json()["detail"])

    def test_wrong_field_type_is_invalid_json(self):
        response = self.client.post(
            "/content/files/search", {"query": "PaymentService", "limit": "5"}
        )
        self.assertEqual(response.status, 400)
        self.assertIn("cannot unmarshal string", response.json()["detail"])

    def test_invalid_utf8_body_is_400(self):
        response = self.client.post("/content/files/read", raw=b'{"repo_id": "\xff"}')
        self.assertEqual(response.status, 400)

    def test_lone_surrogates_read_as_replacement_characters_as_go_reads_them(self):
        for path, raw in (
            ("/code/search", b'{"query": "Payment\\ud800Service"}'),
            ("/code/symbols/search", b'{"symbol": "\\udfff", "repo_id": "payments"}'),
            ("/content/files/read", b'{"repo_id": "payments", "relative_path": "\\ud800.py"}'),
        ):
            with self.subTest(path=path):
                response = self.client.post(path, raw=raw)
                self.assertLess(response.status, 500, response.body)
        response = self.client.post("/code/search", raw=b'{"query": "Pay\\ud800"}')
        self.assertEqual(response.json()["query"], "Pay\ufffd")

    def test_integers_beyond_64_bits_are_400_never_500(self):
        for path, body in (
            ("/code/search", {"query": "PaymentService", "limit": 2**63}),
            ("/content/files/search", {"query": "PaymentService", "limit": -(2**63) - 1}),
            ("/code/quality/inspect", {"check": "complexity", "limit": 10, "offset": 2**64}),
        ):
            with self.subTest(path=path):
                response = self.client.post(path, body)
                self.assertEqual(response.status, 400, response.body)
        response = self.client.get("/repositories", params={"limit": str(2**70)})
        self.assertEqual(response.status, 200)


class ErrorRenderingTests(SynchronousTestCase):
    def setUp(self):
        self.index, _ = small_index(self)
        self.routes = RouteTable()

        @self.routes.route("GET", "/contract")
        def contract(ctx):
            raise ApiError(
                501,
                "no cypher here",
                code="unsupported_capability",
                capability="graph_query.read_only_cypher",
                profiles={"current": "local_lightweight", "required": "local_authoritative"},
            )

        @self.routes.route("GET", "/broken")
        def broken(ctx):
            raise RuntimeError("boom")

        @self.routes.route("GET", "/text")
        def text(ctx):
            return Answer("ready\n", content_type="text/plain; charset=utf-8")

        self.client = ApiClient(self, self.index.path, self.routes)

    def test_contract_error_is_enveloped_when_accepted(self):
        response = self.client.get("/contract", envelope=True)
        self.assertEqual(response.status, 501)
        self.assertEqual(
            response.json(),
            {
                "data": None,
                "truth": None,
                "error": {
                    "code": "unsupported_capability",
                    "message": "no cypher here",
                    "capability": "graph_query.read_only_cypher",
                    "profiles": {"current": "local_lightweight", "required": "local_authoritative"},
                },
            },
        )

    def test_contract_error_is_plain_without_envelope(self):
        response = self.client.get("/contract")
        self.assertEqual(response.json(), {"error": "Not Implemented", "detail": "no cypher here"})

    def test_handler_crash_is_a_500_json_body(self):
        response = self.client.get("/broken")
        self.assertEqual(response.status, 500)
        self.assertEqual(response.json()["error"], "Internal Server Error")
        self.assertEqual(len(self.flushLoggedErrors(RuntimeError)), 1)

    def test_text_answers_keep_their_content_type(self):
        response = self.client.get("/text")
        self.assertEqual(response.header("content-type"), "text/plain; charset=utf-8")
        self.assertEqual(response.body, b"ready\n")

    def test_missing_index_is_503_backend_unavailable(self):
        client = ApiClient(self, str(Path(self.mktemp()) / "absent.sqlite"))
        response = client.get("/repositories", envelope=True)
        self.assertEqual(response.status, 503)
        self.assertEqual(response.json()["error"]["code"], "backend_unavailable")


class ReadDeadlineTests(SynchronousTestCase):
    def test_deadline_interrupts_the_statement_and_answers_504(self):
        index, _ = small_index(self)
        routes = RouteTable()
        client = ApiClient(self, index.path, routes)

        @routes.route("GET", "/slow")
        def slow(ctx):
            # The deadline passes while the statement runs (inline pool: same thread).
            return endless_query(ctx, lambda: client.reactor.advance(client.resource._deadline + 1))

        response = client.get("/slow", envelope=True)
        self.assertEqual(response.status, 504)
        self.assertEqual(response.json()["error"]["code"], "backend_timeout")

    def test_route_budget_tightens_the_deadline(self):
        index, _ = small_index(self)
        routes = RouteTable()
        client = ApiClient(self, index.path, routes)

        @routes.route("GET", "/budgeted", deadline=2.0)
        def budgeted(ctx):
            return endless_query(ctx, lambda: client.reactor.advance(2.5))

        response = client.get("/budgeted", envelope=True)
        self.assertEqual(response.status, 504)
        self.assertEqual(response.json()["error"]["message"], "query exceeded the 2s read deadline")


ENDLESS = (
    "WITH RECURSIVE counter(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM counter)"
    " SELECT count(*) FROM counter"
)


def endless_query(ctx, once_running, outcome: dict[str, Any] | None = None) -> Answer:
    """
    Run a statement that never ends by itself, calling ``once_running`` while it runs.

    The statement stops only when interrupted (or after a million progress steps); the
    SQLite error text is kept in ``outcome["error"]`` before it propagates.
    """
    steps = [0]

    def progress():
        steps[0] += 1
        if steps[0] == 10:
            once_running()
        return int(steps[0] > 1_000_000)

    ctx.conn.set_progress_handler(progress, 1000)
    try:
        return Answer(ctx.conn.execute(ENDLESS).fetchone()[0])
    except sqlite3.OperationalError as error:
        if outcome is not None:
            outcome["error"] = str(error)
        raise


class QueueReactor(Clock):
    """Collects calls made from pool threads; the test runs them on its own thread."""

    def __init__(self) -> None:
        super().__init__()
        self.thread_calls: queue.Queue = queue.Queue()

    def callFromThread(self, f, *args, **kwargs):
        self.thread_calls.put((f, args, kwargs))

    def run_next(self, timeout: float = 10.0) -> None:
        f, args, kwargs = self.thread_calls.get(timeout=timeout)
        f(*args, **kwargs)


class CancellationTests(SynchronousTestCase):
    def test_client_disconnect_interrupts_the_running_query(self):
        index, _ = small_index(self)
        routes = RouteTable()
        started = threading.Event()
        outcome: dict[str, Any] = {}

        @routes.route("GET", "/endless")
        def endless(ctx):
            return endless_query(ctx, started.set, outcome)

        reactor = QueueReactor()
        pool = ThreadPool(minthreads=1, maxthreads=1, name="api-test")
        pool.start()
        self.addCleanup(pool.stop)
        resource = LocalQueryResource(index.path, reactor=reactor, threadpool=pool, routes=routes)
        channel = DummyChannel()
        request = Request(channel)
        request.method = b"GET"
        request.uri = request.path = b"/api/v0/endless"
        request.prepath, request.postpath = [b"api", b"v0"], [b"endless"]
        request.content = None
        resource.render(request)
        self.assertTrue(started.wait(10), "the query never started")
        request.connectionLost(Failure(ConnectionError("client went away")))
        reactor.run_next()  # the query started: its deadline is armed (it already left)
        reactor.run_next()  # its outcome
        self.assertEqual(outcome["error"], "interrupted")
        self.assertFalse(request.finished)
        self.assertEqual(channel.transport.written.getvalue(), b"")
        self.assertEqual(reactor.getDelayedCalls(), [])


SERVICE = """\
class PaymentService:
    def charge(self, amount):
        return amount


def old_refund():
    pass
"""

API = """\
from app.service import PaymentService


def create_charge(req):
    return PaymentService().charge(req)
"""


def rich_index(directory: str) -> dict[str, Any]:
    """
    A repository with two generations, a class, callers, refs and fact history, and a
    second repository without a remote. Returns the ids tests need.
    """
    index = ApiIndex(directory)
    tree = index.root / "trees" / "payments"
    (tree / ".git").mkdir(parents=True)
    (tree / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (tree / ".git" / "refs" / "heads").mkdir(parents=True)
    (tree / ".git" / "refs" / "heads" / "main").write_text("a" * 40 + "\n")
    repo = index.repository(
        "payments",
        remote="https://github.com/acme/payments",
        work_tree=tree,
        generations=("superseded", "active"),
    )
    service = index.file(repo, "app/service.py", SERVICE)
    cls = index.entity(service, "Class", "PaymentService", 1, 3)
    charge = index.entity(service, "Function", "charge", 2, 3, class_context="PaymentService")
    refund = index.entity(
        service, "Function", "old_refund", 6, 7, metadata={"dead_code_root_kinds": []}
    )
    api = index.file(repo, "app/api.py", API)
    create = index.entity(
        api, "Function", "create_charge", 4, 5, metadata={"dead_code_root_kinds": ["http_handler"]}
    )
    index.file(repo, "web/button.tsx", "export const Button = () => null;\n", language="tsx")
    index.file(repo, "assets/logo.bin", "", language=None, status="binary")
    index.edge(repo, "CALLS", create, charge, 5)
    index.edge(repo, "CALLS", create, cls, 5)
    index.edge(repo, "CONTAINS", cls, charge, 2)
    index.ref(repo, "main", "branch", "a" * 40, head=True)
    index.ref(repo, "old", "branch", "b" * 40)
    index.ref(repo, "v1.0", "tag", "b" * 40)
    key = f"file:{repo}:"
    index.fact(repo, key + "app/service.py", "file", "h1", 1, 2, "updated")
    index.fact(repo, key + "app/service.py", "file", "h2", 2)
    index.fact(repo, key + "app/api.py", "file", "h3", 2)
    index.fact(repo, key + "app/gone.py", "file", "h4", 1, 2, "retired")
    index.fact(repo, "content_entity:" + charge, "content_entity", "e1", 1)
    index.fact(repo, "content_entity:old", "content_entity", "e2", 1, 2, "superseded")
    index.fact(repo, "repository:" + repo, "repository", "r1", 1, 2, "updated")
    index.fact(repo, "repository:" + repo, "repository", "r2", 2)
    other = index.repository("ledger")
    index.file(other, "ledger.go", "package ledger\n\nfunc Charge() {}\n", language="go")
    index_stored_files(index.writer)
    index.writer.commit()
    return {
        "index": index,
        "repo": repo,
        "other": other,
        "tree": tree,
        "class": cls,
        "charge": charge,
        "create": create,
        "refund": refund,
        "since": "gen-payments-1",
        "active": "gen-payments-2",
    }


class DeferredPool:
    """Queues calls so a test decides when the "thread" runs them."""

    def __init__(self) -> None:
        self.queued: list = []

    def callInThreadWithCallback(self, on_result, func, *args, **kwargs):
        self.queued.append((on_result, func, args, kwargs))

    def run_all(self) -> None:
        while self.queued:
            on_result, func, args, kwargs = self.queued.pop(0)
            InlinePool().callInThreadWithCallback(on_result, func, *args, **kwargs)


def synthesized_request(path: bytes) -> tuple[Request, DummyChannel]:
    """A GET below ``/api/v0/`` on an in-memory channel."""
    channel = DummyChannel()
    request = Request(channel)
    request.method = b"GET"
    request.uri = request.path = b"/api/v0/" + path
    request.prepath, request.postpath = [b"api", b"v0"], path.split(b"/")
    request.content = None
    return request, channel


class QueuedCallTests(SynchronousTestCase):
    def setUp(self):
        self.index, _ = small_index(self)
        self.routes = RouteTable()
        self.ran: list[str] = []

        @self.routes.route("GET", "/work")
        def work(ctx):
            self.ran.append("work")
            return Answer({"ok": True})

        self.pool = DeferredPool()
        self.reactor = ThreadReactor()
        self.resource = LocalQueryResource(
            self.index.path, reactor=self.reactor, threadpool=self.pool, routes=self.routes
        )

    def test_client_gone_before_the_pool_runs_skips_the_handler(self):
        request, channel = synthesized_request(b"work")
        self.resource.render(request)
        request.connectionLost(Failure(ConnectionError("gone")))
        self.pool.run_all()
        self.assertEqual(self.ran, [])
        self.assertEqual(channel.transport.written.getvalue(), b"")
        self.assertEqual(self.reactor.getDelayedCalls(), [])

    def test_the_deadline_counts_from_when_the_query_starts_not_while_it_waits(self):
        request, channel = synthesized_request(b"work")
        self.resource.render(request)
        self.reactor.advance(31)  # longer than the deadline, waiting for a thread
        self.pool.run_all()
        self.assertEqual(self.ran, ["work"])
        self.assertNotIn(b"504", channel.transport.written.getvalue())

    def test_shutdown_abandons_queued_and_running_calls(self):
        request, _ = synthesized_request(b"work")
        self.resource.render(request)
        self.assertEqual(self.resource.abandon_all(), 1)
        self.pool.run_all()
        self.assertEqual(self.ran, [])
        self.assertEqual(self.resource.abandon_all(), 0)

    def test_a_client_still_waiting_at_shutdown_is_answered_503(self):
        request, channel = synthesized_request(b"work")
        self.resource.render(request)
        self.resource.abandon_all()
        self.pool.run_all()
        self.assertEqual(request.code, 503)
        self.assertTrue(request.finished)
        self.assertIn(b"shutting down", channel.transport.written.getvalue())

    def test_principal_attribute_is_where_the_auth_guard_stores_it(self):
        from eshu_mcp.auth.guard import principal_of
        from eshu_mcp.query.local.api.platform.resource import PRINCIPAL_ATTRIBUTE

        request, _ = synthesized_request(b"work")
        setattr(request, PRINCIPAL_ATTRIBUTE, "someone")
        self.assertEqual(principal_of(request), "someone")


class ReaderLaneTests(SynchronousTestCase):
    """Point lookups and repository-wide scans run on separate threads and queues."""

    def setUp(self):
        from eshu_mcp.query.local.api.platform.lanes import POINT, SCAN, LaneQueues

        self.index, _ = small_index(self)
        self.routes = RouteTable()
        self.ran: list[str] = []

        @self.routes.route("GET", "/index-status")
        def point(ctx):
            self.ran.append("point")
            return Answer({"ok": True})

        @self.routes.route("POST", "/code/dead-code")
        def scan(ctx):
            self.ran.append("scan")
            return Answer({"ok": True})

        @self.routes.route("POST", "/code/search")
        def search(ctx):
            self.ran.append("search")
            return Answer({"ok": True})

        self.points, self.scans = DeferredPool(), DeferredPool()
        self.reactor = ThreadReactor()
        self.resource = LocalQueryResource(
            self.index.path,
            reactor=self.reactor,
            threadpool=self.points,
            scan_threadpool=self.scans,
            routes=self.routes,
            queues=LaneQueues({POINT: 4, SCAN: 2}),
        )

    def render(self, method: bytes, path: bytes, body: bytes = b""):
        request, channel = synthesized_request(path)
        request.method = method
        request.content = io.BytesIO(body)
        body = self.resource.render(request)
        if body is not NOT_DONE_YET:  # answered at once (a refusal)
            request.write(body)
            request.finish()
        return channel

    def test_a_point_lookup_is_answered_while_scans_wait_for_their_threads(self):
        self.render(b"POST", b"code/dead-code")
        self.render(b"POST", b"code/dead-code")
        answered = self.render(b"GET", b"index-status")
        self.points.run_all()
        self.assertEqual(self.ran, ["point"])
        self.assertIn(b"200", answered.transport.written.getvalue())
        self.scans.run_all()
        self.assertEqual(self.ran, ["point", "scan", "scan"])

    def test_a_substring_code_search_waits_with_the_scans_an_exact_one_does_not(self):
        self.render(b"POST", b"code/search", b'{"query": "test"}')
        self.render(b"POST", b"code/search", b'{"query": "Deferred", "exact": true}')
        self.points.run_all()
        self.assertEqual(self.ran, ["search"])  # the exact lookup only
        self.scans.run_all()
        self.assertEqual(self.ran, ["search", "search"])

    def test_a_full_scan_queue_answers_busy_at_once_and_frees_as_scans_start(self):
        self.render(b"POST", b"code/dead-code")
        self.render(b"POST", b"code/dead-code")
        refused = self.render(b"POST", b"code/dead-code")
        written = refused.transport.written.getvalue()
        self.assertIn(b"503", written)
        self.assertIn(b"Retry-After: 1", written)
        self.assertIn(b"busy", written)
        self.scans.run_all()
        again = self.render(b"POST", b"code/dead-code")
        self.scans.run_all()
        self.assertIn(b"200", again.transport.written.getvalue())
        self.assertEqual(self.ran, ["scan", "scan", "scan"])
