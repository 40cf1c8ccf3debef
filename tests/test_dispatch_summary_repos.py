"""Repository, file, entity, freshness and catalog summaries."""

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.dispatch.summaries.result import summarize_envelope
from tests.answer_rows import (
    derived,
    edge,
    envelope,
    full_entity,
    utf8_len,
)


class RepositoryFamilySummaryTests(SynchronousTestCase):
    def test_file_lines_are_in_the_text(self):
        content = "".join(f"line {n}\n" for n in range(40, 81))
        data = {"relative_path": "twisted/internet/defer.py", "content": content}
        data.update(line_count=41, commit_sha="7d7f16abcc9878a1dd69fb932084204949d49f37")
        lines = summarize_envelope("get_file_lines", derived(data)).splitlines()
        self.assertEqual(
            lines[0], "derived/fresh — twisted/internet/defer.py: 41 lines at 7d7f16abcc98"
        )
        self.assertEqual(lines[1:], [f"line {n}" for n in range(40, 81)])

    def test_a_long_file_is_cut_with_the_call_for_the_rest(self):
        content = "".join(f"    statement_{n} = {n}\n" for n in range(1, 972))
        data = {"relative_path": "twisted/internet/task.py", "content": content, "line_count": 971}
        text = summarize_envelope("get_file_content", derived(data))
        lines = text.splitlines()
        self.assertEqual(lines[1], "    statement_1 = 1")
        self.assertEqual(
            lines[-1],
            "... 891 more lines: get_file_lines relative_path=twisted/internet/task.py"
            " start_line=81 end_line=971",
        )
        self.assertLessEqual(utf8_len(text), 4096)

    def test_entity_content_shows_the_source_and_where_the_rest_is(self):
        data = full_entity("callLater", "twisted/internet/task.py", 787, owner="Clock")
        data["source_cache"] = "def callLater(self, delay, callable):\n    return dc"
        data["source_truncated"] = True
        lines = summarize_envelope("get_entity_content", derived(data)).splitlines()
        self.assertEqual(
            lines,
            [
                "derived/fresh — Clock.callLater (Function) twisted/internet/task.py:787-796",
                "def callLater(self, delay, callable):",
                "    return dc",
                "... source continues: get_file_lines relative_path=twisted/internet/task.py"
                " start_line=787 end_line=796",
            ],
        )

    def test_entity_context_leads_with_its_story_then_edges(self):
        data = full_entity("callLater", "t/test_helper.py", 459)
        data["story"] = "Function callLater in t/test_helper.py has 1 incoming relationship."
        data["relationships"] = [edge("write", "callLater", "t/loopback.py", 17)]
        lines = summarize_envelope("get_entity_context", derived(data)).splitlines()
        self.assertEqual(lines[0], "derived/fresh — " + data["story"])
        self.assertEqual(lines[1], "t/loopback.py:17 write -> callLater")

    def test_repository_summary_counts(self):
        data = {
            "repository": {"name": "twisted-sources", "id": "repository:r_1"},
            "file_count": 891,
            "entity_count": 30919,
            "languages": ["python", "html"],
            "entity_types": ["Function", "Class"],
        }
        for tool in ("get_repo_summary", "get_repository_stats"):
            self.assertEqual(
                summarize_envelope(tool, derived(data)),
                "derived/fresh — twisted-sources: 891 files, 30919 code entities; languages: "
                "python, html; entity types: Function, Class\nrepo_id=repository:r_1",
            )

    def test_repository_list_story_context_and_files(self):
        repo = {"name": "twisted-sources", "id": "repository:r_1", "local_path": "/src/t"}
        listed = summarize_envelope(
            "list_indexed_repositories", derived({"repositories": [repo], "count": 1})
        )
        self.assertIn("twisted-sources id=repository:r_1 /src/t", listed)
        story = {"story": "twisted-sources holds 891 files.", "repository": repo}
        self.assertEqual(
            summarize_envelope("get_repo_story", derived(story)),
            "derived/fresh — twisted-sources holds 891 files.",
        )
        context = {"repository": repo, "file_count": 3, "language_breakdown": {"python": 3}}
        context["relationship_overview"] = {"code_edges": {"CALLS": 5, "IMPORTS": 9}}
        self.assertEqual(
            summarize_envelope("get_repo_context", derived(context)),
            "derived/fresh — twisted-sources: 3 files (python 3)\ncode edges: IMPORTS 9, CALLS 5",
        )
        tree = {
            "path": "twisted/internet",
            "entries": [
                {"name": "test", "path": "twisted/internet/test", "type": "dir", "child_count": 57},
                {"name": "task.py", "path": "twisted/internet/task.py", "type": "file"},
            ],
        }
        self.assertEqual(
            summarize_envelope("list_repository_files", derived(tree)),
            'derived/fresh — 2 entries for "twisted/internet"\n'
            "twisted/internet/test/ (57 entries)\ntwisted/internet/task.py",
        )

    def test_freshness_and_changed_since(self):
        fresh = {
            "verdict": "current",
            "repository": {"name": "twisted-sources"},
            "work_tree_commit": "7d7f16abcc9878a1",
            "observed_commit": "7d7f16abcc9878a1",
        }
        self.assertEqual(
            summarize_envelope("get_repository_freshness", envelope(fresh)),
            "exact/fresh — twisted-sources: index is current "
            "(work tree 7d7f16abcc98, indexed 7d7f16abcc98)",
        )
        changed = {
            "since_generation_id": "3078f497e9e87cfd",
            "current_active_generation_id": "b29863c59b00f818",
            "categories": [
                {
                    "category": "files",
                    "counts": {"added": 0, "updated": 1, "unchanged": 890},
                    "samples": {"updated": [{"stable_fact_key": "file:twisted/python/util.py"}]},
                },
                {"category": "facts", "counts": {"added": 0, "unchanged": 4}},
            ],
        }
        self.assertEqual(
            summarize_envelope("get_changed_since", envelope(changed)).splitlines(),
            [
                "exact/fresh — changes since generation 3078f497e9e8 (now b29863c59b00):",
                "files: 1 updated",
                "  updated: file:twisted/python/util.py",
                "facts: no changes",
            ],
        )

    def test_catalog_rows_show_id_and_name(self):
        data = {"count": 1, "playbooks": [{"id": "code.who_calls", "name": "Find the callers"}]}
        self.assertEqual(
            summarize_envelope("list_query_playbooks", envelope(data)),
            "exact/fresh — 1 playbook\ncode.who_calls: Find the callers",
        )

    def test_collector_fed_empty_answer_is_not_absence(self):
        data = {"correlations": [], "count": 0, "limit": 50, "next_cursor": None}
        env = envelope(
            data,
            "fallback",
            "unavailable",
            detail="no Kubernetes collector runs in the embedded backend",
        )
        self.assertEqual(
            summarize_envelope("list_kubernetes_correlations", env),
            "fallback/unavailable (no Kubernetes collector runs in the embedded backend) — "
            "No correlations found; empty is not evidence of absence",
        )

    def test_an_empty_local_collector_answer_says_no_file_was_read(self):
        data = {"correlations": [], "count": 0, "limit": 50, "next_cursor": None}
        env = envelope(data, "derived", "fresh")
        env["truth"]["reason"] = (
            "the local Kubernetes collector found no files it reads in scope; an empty answer"
            " means the repository holds no such evidence, not that none exists elsewhere"
        )
        self.assertEqual(
            summarize_envelope("list_kubernetes_correlations", env),
            "derived/fresh — No correlations found: the local Kubernetes collector found no"
            " files it reads in scope",
        )

    def test_unknown_tools_list_the_first_rows_they_hold(self):
        data = {
            "partial_reasons": [{"x": 1}],
            "widgets": [{"name": "w1", "path": "a/b.py", "line": 3}],
        }
        self.assertEqual(
            summarize_envelope("some_new_tool", derived(data)),
            "derived/fresh — 1 widget\na/b.py:3 w1",
        )

    def test_a_content_read_the_answer_cut_names_the_call_for_the_rest(self):
        data = {"relative_path": "twisted/internet/task.py", "content": "a = 1\nb = 2\n"}
        data.update(line_count=971, content_truncated=True, next_start_line=403)
        data["rest"] = {
            "tool": "get_file_lines",
            "arguments": {"relative_path": "twisted/internet/task.py", "start_line": 403},
        }
        lines = summarize_envelope("get_file_lines", derived(data)).splitlines()
        self.assertEqual(
            lines[-1],
            "... more: get_file_lines relative_path=twisted/internet/task.py start_line=403",
        )

    def test_a_cut_line_range_names_absolute_lines_when_the_answer_says_where_it_stopped(self):
        content = "".join(f"x{n} = {n}\n" for n in range(100, 300))
        data = {"relative_path": "m.py", "content": content, "line_count": 200}
        data.update(content_truncated=True, next_start_line=300)
        lines = summarize_envelope("get_file_lines", derived(data)).splitlines()
        self.assertEqual(lines[1], "x100 = 100")
        self.assertEqual(
            lines[-1], "... 120 more lines: get_file_lines relative_path=m.py start_line=180"
        )

    def test_a_cut_file_counts_the_lines_left_to_its_end_not_to_the_answers_end(self):
        content = "".join(f"x{n} = {n}\n" for n in range(1, 340))
        data = {"relative_path": "defer.py", "content": content, "line_count": 2541}
        data.update(content_truncated=True, next_start_line=340)
        data["rest"] = {
            "tool": "get_file_lines",
            "arguments": {"relative_path": "defer.py", "start_line": 340, "end_line": 2541},
        }
        lines = summarize_envelope("get_file_content", derived(data)).splitlines()
        self.assertEqual(
            lines[-1],
            "... 2461 more lines: get_file_lines relative_path=defer.py start_line=81"
            " end_line=2541",
        )

    def test_count_only_unavailable_answers_say_nothing_was_found(self):
        env = envelope({"filters": {"a": 1}}, "fallback", "unavailable", detail="no collector")
        self.assertEqual(
            summarize_envelope("count_infra_resources", env),
            "fallback/unavailable (no collector) — Nothing found; empty is not evidence of absence",
        )
        env = envelope({"finding_kinds": []}, "fallback", "unavailable", detail="no collector")
        self.assertIn("— Nothing found;", summarize_envelope("get_replatforming_rollups", env))

    def test_capability_catalog_rows(self):
        rows = [{"capability": "call_graph.callers", "display_name": "Call graph — callers"}]
        text = summarize_envelope("get_capability_catalog", envelope({"capabilities": rows}))
        self.assertEqual(
            text, "exact/fresh — 1 capability\ncall_graph.callers: Call graph — callers"
        )
        many = summarize_envelope("get_capability_catalog", envelope({"capabilities": rows * 2}))
        self.assertTrue(many.startswith("exact/fresh — 2 capabilities"))

    def test_a_page_of_a_catalog_says_it_is_one_page_of_the_total(self):
        rows = [{"capability": f"c{n}", "display_name": f"C {n}"} for n in range(3)]
        data = {"capabilities": rows, "total": 120, "truncated": True, "offset": 0, "limit": 3}
        text = summarize_envelope("get_capability_catalog", envelope(data))
        self.assertTrue(text.startswith("exact/fresh — 3 of 120 capabilities; more:"), text)

    def test_a_resolved_playbook_lists_its_calls_instead_of_completed(self):
        steps = [
            {"id": "find", "tool": "find_symbol", "params": {"symbol": "charge", "limit": 25}},
            {"id": "read", "tool": "get_entity_content", "params": {}},
        ]
        resolved = {"id": "code.locate_symbol", "name": "Locate a symbol", "steps": steps}
        text = summarize_envelope("resolve_query_playbook", envelope({"resolved": resolved}))
        self.assertEqual(
            text.splitlines(),
            [
                "exact/fresh — playbook code.locate_symbol (Locate a symbol): 2 steps",
                "find: find_symbol(symbol=charge, limit=25)",
                "read: get_entity_content()",
            ],
        )
        resolved = {"id": "w", "calls": [], "unbound_calls": [{"id": "stats"}]}
        resolved["missing_evidence"] = ["inventory"]
        text = summarize_envelope(
            "resolve_investigation_workflow", envelope({"resolved": resolved})
        )
        self.assertEqual(
            text,
            "exact/fresh — workflow w: 0 calls; 1 unbound (their inputs are missing);"
            " missing evidence: inventory",
        )
