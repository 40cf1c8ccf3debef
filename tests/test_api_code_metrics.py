"""Tests for /code/call-graph/metrics: hubs, recursion, paging and the edge ceiling."""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.api.platform.framework import ApiError
from eshu_mcp.query.local.api.quality.call_graph_metrics import hub_functions, recursive_functions
from tests.test_api_code_common import CodeIndex, call, error_of, scratch_dir, shop_index

ROUTE = "/code/call-graph/metrics"


class MetricsTests(SynchronousTestCase):
    def setUp(self):
        self.index, self.repo = shop_index(self)
        self.conn = self.index.reader()

    def test_charge_is_the_top_hub(self):
        answer = call(self.conn, ROUTE, {"repo_id": "shop", "limit": 1})
        data = answer.data
        [top] = data["functions"]
        self.assertEqual(top["function_name"], "charge")
        self.assertEqual(
            (top["incoming_calls"], top["outgoing_calls"], top["total_degree"]), (2, 1, 3)
        )
        self.assertEqual(top["rank"], 1)
        self.assertEqual(top["entity_handle"], "entity:" + self.index.entities["charge"])
        self.assertTrue(data["truncated"])
        self.assertEqual(data["next_offset"], 1)
        self.assertEqual(data["coverage"]["query_shape"], "hub_functions")
        self.assertEqual(answer.truth["capability"], "call_graph.metrics")

    def test_recursive_functions_find_self_and_mutual_calls(self):
        data = call(self.conn, ROUTE, {"repo_id": "shop", "metric_type": "recursive_functions"})
        kinds = {
            (r["function_name"], r["partner_name"], r["recursion_kind"])
            for r in data.data["functions"]
        }
        self.assertEqual(
            kinds,
            {
                ("loop", "loop", "self_call"),
                ("ping", "pong", "mutual_call"),
                ("pong", "ping", "mutual_call"),
            },
        )
        ping = next(r for r in data.data["functions"] if r["function_name"] == "ping")
        self.assertEqual(
            ping["recursion_evidence"]["cycle_path"],
            [ping["function_id"], ping["partner_id"], ping["function_id"]],
        )

    def test_edge_ceiling_is_a_422_that_says_how_to_narrow(self):
        error = self.assertRaises(ApiError, hub_functions, self.conn, self.repo, "", scope_limit=3)
        self.assertEqual(error.status, 422)
        self.assertEqual(
            error.detail,
            "call graph metrics scope is too broad: reached the 4-edge sentinel;"
            " maximum exact scope is 3; pass language to measure one language at a time",
        )

    def test_language_narrows_a_scope_past_the_ceiling(self):
        ledger = self.index.file(self.repo, "ledger/post.go", "x\n" * 8, language="go")
        self.index.entity(ledger, "Function", "Post", 2, 3)
        self.index.entity(ledger, "Function", "Undo", 6, 7)
        self.index.calls("Post", "Undo", line=3)
        self.index.calls("Undo", "Post", line=7)
        self.index.writer.commit()
        self.assertRaises(ApiError, recursive_functions, self.conn, self.repo, "", scope_limit=2)
        rows = recursive_functions(self.conn, self.repo, "go", scope_limit=2)
        self.assertEqual(
            [(r["function_name"], r["partner_name"], r["language"]) for r in rows],
            [("Post", "Undo", "go"), ("Undo", "Post", "go")],
        )

    def test_pages_continue_one_ranking(self):
        ranking = hub_functions(self.conn, self.repo, "")
        paged = []
        for offset in range(0, len(ranking) + 2, 2):
            body = {"repo_id": "shop", "limit": 2, "offset": offset}
            paged += call(self.conn, ROUTE, body).data["functions"]
        self.assertEqual(paged, ranking)
        self.assertEqual([r["rank"] for r in paged], list(range(1, len(ranking) + 1)))
        self.assertEqual(
            [(r["function_name"], r["total_degree"]) for r in ranking[:3]],
            [("charge", 3), ("helper", 2), ("create_charge", 2)],
        )

    def test_duplicate_edges_count_once(self):
        self.index.calls("batch", "charge", line=12)
        self.index.writer.commit()
        [batch] = [
            r for r in hub_functions(self.conn, self.repo, "") if r["function_name"] == "batch"
        ]
        self.assertEqual((batch["outgoing_calls"], batch["incoming_calls"]), (2, 0))

    def test_validation(self):
        cases = [
            ({}, "repo_id is required"),
            ({"repo_id": "shop", "limit": 201}, "limit must be <= 200"),
            ({"repo_id": "shop", "limit": 0}, "limit must be >= 1"),
            ({"repo_id": "shop", "offset": -1}, "offset must be >= 0"),
            (
                {"repo_id": "shop", "metric_type": "fan_out"},
                "metric_type must be one of: hub_functions, recursive_functions",
            ),
        ]
        for body, detail in cases:
            self.assertEqual(error_of(self.conn, ROUTE, body).detail, detail)


# Functions of the generated graph: each calls every other one, so 240 * 239 = 57,360
# distinct pairs, more than Eshu's 50,000-edge exact scope.
FUNCTIONS = 240


class LargeGraphTests(SynchronousTestCase):
    """A repository whose call graph is past Eshu's ceiling but within an exact answer."""

    def setUp(self):
        self.index = CodeIndex(scratch_dir(self))
        repo = self.index.repository("mesh")
        source = "".join(f"def f{i:03}():\n    pass\n" for i in range(FUNCTIONS))
        mesh = self.index.file(repo, "mesh.py", source)
        names = [f"f{i:03}" for i in range(FUNCTIONS)]
        for i, name in enumerate(names):
            self.index.entity(mesh, "Function", name, 2 * i + 1, 2 * i + 2)
        writer = self.index.writer
        nid = dict(writer.execute("SELECT node_id, nid FROM nodes"))
        ids = [nid[self.index.entities[name]] for name in names]
        [(repo_key,)] = writer.execute("SELECT repo_key FROM repositories")
        calls = [(a, b, 2) for a in ids for b in ids if a != b]
        calls += [(ids[0], ids[0], 2), (ids[1], ids[2], 1)]  # a self call, a duplicate edge
        writer.execute("BEGIN")  # the writer autocommits: one transaction for 57k rows
        writer.executemany(
            "INSERT INTO edge_rows (repo, type, src, dst, method, confidence, line_number)"
            f" VALUES ({repo_key}, 1, ?, ?, 2, 95, ?)",
            calls,
        )
        writer.commit()
        self.conn = self.index.reader()
        self.addCleanup(self.conn.close)
        self.repo = repo

    def test_hub_functions_answer_past_eshus_ceiling(self):
        data = call(self.conn, ROUTE, {"repo_id": "mesh", "limit": 2}).data
        self.assertEqual(
            [
                (r["function_name"], r["incoming_calls"], r["outgoing_calls"], r["rank"])
                for r in data["functions"]
            ],
            [("f000", 240, 240, 1), ("f001", 239, 239, 2)],
        )
        self.assertTrue(data["truncated"])

    def test_recursive_functions_count_every_cycle(self):
        first = call(
            self.conn, ROUTE, {"repo_id": "mesh", "metric_type": "recursive_functions"}
        ).data["functions"][0]
        self.assertEqual(first["function_name"], "f000")
        every = FUNCTIONS * (FUNCTIONS - 1) + 1
        last = recursive_functions(self.conn, self.repo, "", offset=every - 1, limit=5)
        self.assertEqual(
            [(r["rank"], r["function_name"], r["recursion_kind"]) for r in last],
            [(every, "f239", "mutual_call")],
        )
        self.assertEqual(recursive_functions(self.conn, self.repo, "", offset=every, limit=5), [])
