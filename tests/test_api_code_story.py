"""Tests for /code/relationships/story: callers, callees, transitive, hierarchy, overrides."""

from __future__ import annotations

from pathlib import Path

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.dispatch.summaries.result import summarize_envelope
from eshu_mcp.query.local.index.build.indexer import index_repositories
from eshu_mcp.query.local.index.store.database import open_reader
from tests.test_api_code_common import call, error_of, scratch_dir, shop_index

from .test_index_indexer import git

STORY = "/code/relationships/story"


class StoryTests(SynchronousTestCase):
    def setUp(self):
        self.index, self.repo = shop_index(self)
        self.conn = self.index.reader()

    def story(self, **body):
        return call(self.conn, STORY, {"repo_id": "shop", **body})

    def test_callers_of_charge_include_create_charge_and_batch(self):
        answer = self.story(target="charge", direction="incoming", relationship_type="CALLS")
        data = answer.data
        self.assertEqual(data["target_resolution"]["status"], "resolved")
        self.assertEqual(data["target_resolution"]["entity_id"], self.index.entities["charge"])
        callers = {row["source_name"] for row in data["relationships"]}
        self.assertEqual(callers, {"create_charge", "batch"})
        row = next(r for r in data["relationships"] if r["source_name"] == "create_charge")
        self.assertEqual(row["resolution_method"], "import_binding")
        self.assertEqual(row["provenance"]["confidence_tier"], "high")
        self.assertEqual(row["provenance"]["truth_state"], "derived")
        self.assertEqual(row["edge_origin"], "direct_code_edge")
        self.assertEqual(row["source_handle"], "entity:" + self.index.entities["create_charge"])
        self.assertEqual(row["source_file_path"], "shop/api.py")
        weak = next(r for r in data["relationships"] if r["source_name"] == "batch")
        self.assertEqual(weak["provenance"]["confidence_tier"], "low")
        self.assertEqual(data["coverage"]["missing_edge_reason"], "complete")
        self.assertEqual(data["coverage"]["available_by_direction"], {"incoming": 2, "outgoing": 0})
        self.assertEqual(data["summary"]["returned_by_direction"], {"incoming": 2, "outgoing": 0})
        self.assertEqual(data["source_backend"], "sqlite_call_graph")
        self.assertEqual(answer.truth["capability"], "call_graph.relationship_story")

    def test_callees_default_to_both_directions(self):
        data = self.story(target="charge").data
        by_direction = {
            (r["direction"], r["source_name"], r["target_name"]) for r in data["relationships"]
        }
        self.assertIn(("outgoing", "charge", "helper"), by_direction)
        self.assertIn(("incoming", "batch", "charge"), by_direction)
        self.assertEqual(data["scope"]["relationship_type"], "CALLS")
        self.assertEqual(data["coverage"]["directions"], ["incoming", "outgoing"])

    def test_min_confidence_floor_drops_weak_edges(self):
        data = self.story(target="charge", direction="incoming", min_confidence=0.8).data
        self.assertEqual([r["source_name"] for r in data["relationships"]], ["create_charge"])
        data = self.story(target="charge", direction="incoming", min_confidence=0.99).data
        self.assertEqual(data["relationships"], [])
        self.assertEqual(data["coverage"]["missing_edge_reason"], "all_below_confidence_floor")

    def test_limit_truncates_with_reason(self):
        data = self.story(target="charge", direction="incoming", limit=1).data
        self.assertEqual(len(data["relationships"]), 1)
        self.assertTrue(data["summary"]["truncated"])
        self.assertEqual(data["coverage"]["missing_edge_reason"], "truncated_by_limit")
        self.assertEqual(data["coverage"]["truncation_state"], "count")

    def test_token_budget_trims_rows(self):
        data = self.story(target="charge", direction="incoming", token_budget=10).data
        self.assertEqual(data["relationships"], [])
        self.assertEqual(data["coverage"]["truncation_state"], "token_budget")

    def test_transitive_callers_reach_batch_through_create_charge(self):
        data = self.story(
            target="helper", direction="incoming", include_transitive=True, max_depth=3
        ).data
        depths = {r["source_name"]: r["depth"] for r in data["relationships"]}
        self.assertEqual(depths["charge"], 1)
        self.assertEqual(depths["create_charge"], 2)
        self.assertEqual(depths["batch"], 2)
        self.assertEqual(data["coverage"]["query_shape"], "entity_anchor_bounded_bfs")

    def test_transitive_depth_is_bounded(self):
        data = self.story(
            target="helper", direction="incoming", include_transitive=True, max_depth=1
        ).data
        self.assertEqual({r["depth"] for r in data["relationships"]}, {1})

    def test_importers_of_a_module_include_the_api_file(self):
        data = self.story(target="service", direction="incoming", relationship_type="IMPORTS").data
        self.assertEqual(data["target_resolution"]["status"], "resolved")
        [row] = data["relationships"]
        self.assertEqual((row["source_type"], row["source_name"]), ("File", "shop/api.py"))
        self.assertEqual(row["imported_name"], "charge")
        self.assertEqual(row["target_file_path"], "shop/service.py")

    def test_unknown_target_is_unresolved_not_an_error(self):
        data = self.story(target="nothing_here").data
        self.assertEqual(data["target_resolution"]["status"], "unresolved")
        self.assertEqual(data["coverage"]["missing_edge_reason"], "target_unresolved")

    def test_ambiguous_target_lists_candidates_with_rows_by_definition(self):
        data = self.story(target="run").data
        self.assertEqual(data["target_resolution"]["status"], "ambiguous")
        self.assertEqual(len(data["target_resolution"]["candidates"]), 2)
        self.assertEqual(data["target_resolution"]["candidate_count"], 2)
        [row] = data["relationships"]
        self.assertEqual(row["definition_entity_id"], row["source_id"])
        self.assertEqual(data["definition_groups"][0]["edge_count"], 1)
        self.assertIsNone(data["summary"]["next_offset"])
        self.assertEqual(data["coverage"]["missing_edge_reason"], "complete")

    def test_class_hierarchy_of_child(self):
        data = self.story(target="Child", query_type="class_hierarchy", direction="both").data
        hierarchy = data["class_hierarchy"]
        self.assertEqual([a["name"] for a in hierarchy["ancestors"]], ["Base"])
        self.assertEqual([r["target_name"] for r in data["relationships"]], ["Base"])
        self.assertEqual(data["scope"]["relationship_type"], "INHERITS")

    def test_class_hierarchy_needs_a_class(self):
        error = error_of(self.conn, STORY, {"target": "charge", "query_type": "class_hierarchy"})
        self.assertEqual(
            error.detail, "class_hierarchy target must resolve to a class or inheritable entity"
        )

    def test_overrides_by_entity_and_repository(self):
        child_run = self.story(entity_id=self.index.entities["run"], query_type="overrides").data
        story = child_run["override_story"]
        self.assertEqual([o["file_path"] for o in story["overrides"]], ["shop/service.py"])
        # each side says where it is and which class defines it
        self.assertEqual(story["overrides"][0]["start_line"], 2)
        self.assertEqual(story["overrides"][0]["class_context"], "Base")
        text = summarize_envelope("analyze_code_relationships", {"data": child_run})
        self.assertIn("run overrides:\nshop/service.py:2 Base.run", text)
        base = self.story(target="Base.run", query_type="overrides").data
        text = summarize_envelope("analyze_code_relationships", {"data": base})
        self.assertIn("overridden by 1 method:\nshop/service.py:7 Child.run", text)
        repo_wide = self.story(query_type="overrides").data
        self.assertEqual(len(repo_wide["relationships"]), 1)
        self.assertEqual(repo_wide["relationships"][0]["type"], "OVERRIDES")

    def test_mcp_default_body_is_accepted(self):
        body = {
            "cross_repo": False,
            "direction": "",
            "entity_id": "",
            "include_transitive": False,
            "language": "",
            "limit": 25,
            "max_depth": 5,
            "offset": 0,
            "relationship_type": "",
            "relationship_types": None,
            "repo_id": "",
            "target": "helper",
            "token_budget": 0,
        }
        data = call(self.conn, STORY, body).data
        self.assertEqual({r["source_name"] for r in data["relationships"]}, {"charge", "run"})


GO_SOURCES = {
    "go.mod": "module example.com/bt\n\ngo 1.21\n",
    "commands.go": "package tea\n\nfunc Batch() {}\n",
    "tea.go": "package tea\n\ntype Program struct{}\n\nfunc NewProgram() *Program { return nil }\n",
    "cmd/demo/main.go": (
        'package main\n\nimport tea "example.com/bt"\n\nfunc main() { tea.NewProgram() }\n'
    ),
    "cmd/other/main.go": 'package main\n\nimport "example.com/bt"\n\nfunc main() { tea.Batch() }\n',
    "lonely/lonely.go": "package lonely\n\nfunc Alone() {}\n",
}


class GoFileImportersTests(SynchronousTestCase):
    """Go imports name packages: the importers of a file are those of its package."""

    def setUp(self) -> None:
        repo = Path(scratch_dir(self)) / "repo"
        for path, text in GO_SOURCES.items():
            (repo / path).parent.mkdir(parents=True, exist_ok=True)
            (repo / path).write_text(text)
        git(repo, "init", "-q", "-b", "main")
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", ".")
        db = repo.parent / "index.sqlite"
        self.assertTrue(index_repositories(db, [repo], workers=1).ok)
        self.conn = open_reader(db)
        self.addCleanup(self.conn.close)

    def test_every_file_of_a_package_has_the_package_importers(self) -> None:
        for path in ("tea.go", "commands.go"):
            body = {"target": path, "direction": "incoming", "relationship_type": "IMPORTS"}
            data = call(self.conn, STORY, body).data
            self.assertEqual(data["target_resolution"]["status"], "resolved", path)
            self.assertEqual(data["target_resolution"]["name"], "example.com/bt", path)
            importers = {r["source_name"] for r in data["relationships"]}
            self.assertEqual(importers, {"cmd/demo/main.go", "cmd/other/main.go"}, path)
            text = summarize_envelope(
                "analyze_code_relationships", {"data": data, "truth": {"level": "derived"}}
            )
            self.assertIn(f"{path} is in Go package example.com/bt", text)

    def test_a_go_file_whose_package_nobody_imports_says_go_imports_packages(self) -> None:
        body = {"target": "lonely/lonely.go", "direction": "incoming"}
        data = call(self.conn, STORY, {**body, "relationship_type": "IMPORTS"}).data
        self.assertEqual(data["target_resolution"]["status"], "unresolved")
        text = summarize_envelope(
            "analyze_code_relationships", {"data": data, "truth": {"level": "derived"}}
        )
        self.assertIn("no indexed file imports its package (Go imports name packages", text)
