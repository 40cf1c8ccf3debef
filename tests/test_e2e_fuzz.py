"""
Fuzzed tool calls, a seeded property test with a bounded budget: whatever a client puts in
a call's arguments (lone surrogates, integers beyond 64 bits, NaN, huge or nested values,
unknown names, hostile paths), the daemon answers with a clear error or an answer, never
an internal error, never a 5xx, and never a traceback in its log.
"""

from __future__ import annotations

import json
import random
import shutil
import tempfile
from pathlib import Path
from typing import Any

from twisted.logger import LogLevel, formatEvent, globalLogPublisher
from twisted.trial.unittest import SynchronousTestCase
from twisted.web.server import Site

from eshu_mcp.catalog import read_only_tools
from eshu_mcp.protocol.jsonrpc import INTERNAL_ERROR
from eshu_mcp.query.local.api.platform.resource import LocalQueryResource
from eshu_mcp.query.local.index.build.indexer import index_repositories
from eshu_mcp.transport import in_process_message_handler
from tests.support import HttpExchange
from tests.test_api_grants import arguments, work_tree
from tests.test_api_resource import InlinePool, ThreadReactor

SEED = 20261205
BUDGET = 400

HOSTILE_VALUES: tuple[Any, ...] = (
    "\ud800",
    "charge\udfff",
    {"\udc00": "x"},
    ["\ud83d"],
    2**63,
    -(2**63) - 1,
    10**30,
    1e308,
    -0.0,
    True,
    None,
    "",
    " ",
    "x" * 5000,
    [[[[[[[[[[["deep"]]]]]]]]]]],
    list(range(600)),
    {"nested": {"object": [1, 2, 3]}},
    "../../../../etc/passwd",
    "/etc/passwd",
    "%ff%00",
    "nul\x00byte",
    "' OR 1=1 --",
    '"; DROP TABLE files; --',
    "*",
    "(",
    "[a-",
    "99999999999999999999",
    "-1",
    "NaN",
    "\u202e\u2028",
)
NON_JSON_VALUES = ("NaN", "Infinity", "-Infinity", "1e999")
"""Raw tokens Python's encoder writes but JSON has not: sent as the argument's text."""


def fuzzed_arguments(rng: random.Random, tool: Any, base: dict) -> tuple[dict, str | None]:
    """``base`` with one to three arguments replaced (or added) by hostile values."""
    args = dict(base)
    names = [*tool.input_schema.get("properties", {}), "no_such_argument", "\ud800name"]
    raw = None
    for _ in range(rng.randint(1, 3)):
        name = rng.choice(names)
        if rng.random() < 0.1:
            raw = rng.choice(NON_JSON_VALUES)
            args[name] = "__RAW__"
        else:
            args[name] = rng.choice(HOSTILE_VALUES)
    return args, raw


class FuzzedCallTests(SynchronousTestCase):
    @classmethod
    def setUpClass(cls):
        cls.base = Path(tempfile.mkdtemp(prefix="eshu-fuzz-")).resolve()
        repo = work_tree(cls.base / "alpha")
        cls.db = str(cls.base / "index.sqlite")
        assert index_repositories(cls.db, [str(repo)], workers=1).ok
        conn_values = {
            "repo_id": "alpha",
            "name": "compute_fee",
            "entity_id": "content-entity:e_000000000000",
            "path": "app/fees.py",
            "scope_id": "git-repository-scope:alpha",
        }
        cls.values = conn_values

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.base, ignore_errors=True)

    def setUp(self):
        self.reactor = ThreadReactor()
        resource = LocalQueryResource(self.db, reactor=self.reactor, threadpool=InlinePool())
        handler = in_process_message_handler(resource, clock=self.reactor)
        self.site = Site(handler, parsePOSTFormSubmission=False, reactor=self.reactor)
        self.logged: list[dict] = []
        globalLogPublisher.addObserver(self.logged.append)
        self.addCleanup(globalLogPublisher.removeObserver, self.logged.append)

    def post(self, body: bytes) -> tuple[int, Any]:
        exchange = HttpExchange(self.site)
        exchange.request(
            b"POST",
            b"/mcp/message",
            headers={b"content-type": b"application/json"},
            body=body,
        )
        response = exchange.response()
        return response.status, response.json() if response.body else None

    def test_fuzzed_calls_get_no_internal_error_no_5xx_and_no_traceback(self):
        rng = random.Random(SEED)
        tools = read_only_tools()
        internal, server_errors, answered = [], [], 0
        for number in range(BUDGET):
            tool = rng.choice(tools)
            base = rng.choice(arguments(tool, self.values))
            args, raw = fuzzed_arguments(rng, tool, base)
            message = {
                "jsonrpc": "2.0",
                "id": number,
                "method": "tools/call",
                "params": {"name": tool.name, "arguments": args},
            }
            body = json.dumps(message)  # lone surrogates travel as \\ud800 escapes
            if raw is not None:
                body = body.replace('"__RAW__"', raw)
            status, reply = self.post(body.encode("ascii"))
            if status >= 500:
                server_errors.append((tool.name, args, status))
                continue
            if not isinstance(reply, dict):
                continue
            error = reply.get("error") or {}
            result = reply.get("result") or {}
            text = " ".join(block.get("text", "") for block in result.get("content", []) if block)
            if error.get("code") == INTERNAL_ERROR or "internal error" in text.lower():
                internal.append((tool.name, args, error or text[:200]))
            answered += 1
        failures = [
            formatEvent(event)
            for event in self.logged
            if event.get("log_failure") is not None
            or event.get("log_level") in (LogLevel.error, LogLevel.critical)
        ]
        self.assertEqual(server_errors, [])
        self.assertEqual(internal, [])
        self.assertEqual(failures, [])
        self.assertGreater(answered, BUDGET * 0.9)

    def test_fuzzed_api_requests_get_no_5xx_and_no_traceback(self):
        from eshu_mcp.query.local.api.platform.routemap import load_route_map
        from tests.test_api_resource import ApiClient

        rng = random.Random(SEED + 1)
        client = ApiClient(self, self.db)
        specs = [spec for spec in load_route_map() if spec.relative_path is not None]
        names = ("repo_id", "limit", "offset", "query", "entity_id", "relative_path", "x")
        server_errors = []
        for _ in range(BUDGET):
            spec = rng.choice(specs)
            path = "/".join(
                rng.choice(("%ff", "%00", "..", "x" * 300, "repository:r_1", "9" * 30))
                if part.startswith("{")
                else part
                for part in spec.relative_path.split("/")
            )
            fields = {rng.choice(names): rng.choice(HOSTILE_VALUES) for _ in range(3)}
            if spec.method == "GET":
                params = {k: str(v) for k, v in fields.items() if isinstance(v, str | int)}
                params = {k: v.encode("utf-8", "surrogatepass") for k, v in params.items()}
                response = client.request("GET", path, params=params)
            else:
                raw = json.dumps(fields).encode("ascii")
                if rng.random() < 0.2:
                    raw = raw.replace(b'"x"', b"NaN")
                response = client.request(spec.method, path, raw=raw)
            unsupported = response.status == 501 and spec.mode == "501-unsupported"
            if response.status >= 500 and not unsupported:
                server_errors.append((spec.method, path, fields, response.status, response.body))
        failures = [
            formatEvent(event)
            for event in self.logged
            if event.get("log_failure") is not None
            or event.get("log_level") in (LogLevel.error, LogLevel.critical)
        ]
        self.assertEqual(server_errors, [])
        self.assertEqual(failures, [])
