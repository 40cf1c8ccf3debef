"""Code family summaries: search, symbols, dead code, complexity, imports, secrets."""

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.dispatch.summaries.result import summarize_envelope
from tests.answer_rows import (
    SHAPES,
    derived,
    full_entity,
)


class CodeFamilySummaryTests(SynchronousTestCase):
    """Each family's summary leads with its top result, whatever the row shape."""

    def test_find_code_lists_matches_as_path_line_name(self):
        for shape, make in SHAPES.items():
            rows = [
                make("callLater", "twisted/internet/base.py", 946, owner="ReactorBase"),
                make("callLater", "twisted/internet/task.py", 787, owner="Clock"),
            ]
            data = {"query": "callLater", "count": 2, "results": rows, "truncated": False}
            text = summarize_envelope("find_code", derived(data))
            self.assertEqual(
                text.splitlines(),
                [
                    'derived/fresh — 2 matches for "callLater"',
                    "twisted/internet/base.py:946 ReactorBase.callLater (Function)",
                    "twisted/internet/task.py:787 Clock.callLater (Function)",
                ],
                shape,
            )

    def test_find_symbol_says_ambiguous_and_names_the_first_definition(self):
        for shape, make in SHAPES.items():
            data = {
                "symbol": "Deferred",
                "count": 1,
                "results": [make("Deferred", "twisted/internet/defer.py", 382, "Class")],
                "ambiguity": {"ambiguous": True, "reason": "multiple definitions matched"},
            }
            text = summarize_envelope("find_symbol", derived(data))
            self.assertIn("twisted/internet/defer.py:382 Deferred (Class)", text, shape)
            self.assertIn("ambiguous: multiple definitions matched", text)

    def test_truncated_answers_say_how_to_get_more(self):
        rows = [full_entity(f"f{i}", "a.py", i) for i in range(25)]
        paged = {"results": rows, "count": 25, "limit": 25, "offset": 0, "truncated": True}
        text = summarize_envelope("search_entity_content", derived(paged))
        self.assertIn("more: call again with offset=25", text.splitlines()[0])
        # The top five rows, then where the other twenty are.
        self.assertIn("a.py:4 f4 (Function)", text)
        self.assertNotIn("f5", text)
        self.assertIn("... 20 more rows in the structured content", text)
        self.assertEqual(len(text.splitlines()), 7)
        next_offset = {"results": rows[:3], "next_offset": 3, "truncated": True}
        text = summarize_envelope("inspect_code_inventory", derived(next_offset))
        self.assertIn("more: call again with offset=3", text)
        unpaged = {"results": rows[:3], "query": "f", "count": 3, "limit": 3, "truncated": True}
        text = summarize_envelope("find_code", derived(unpaged))
        self.assertIn("truncated: raise limit or narrow the query", text)

    def test_search_file_content_lists_the_files(self):
        rows = [{"relative_path": "twisted/internet/task.py", "content": "", "line_count": 900}]
        text = summarize_envelope("search_file_content", derived({"results": rows, "count": 1}))
        self.assertEqual(text, "derived/fresh — 1 matching file\ntwisted/internet/task.py")

    def test_inventory_names_the_class_with_the_method(self):
        row = full_entity("dataReceived", "twisted/conch/ssh/agent.py", 32)
        row["class_name"] = "SSHAgentClient"
        data = {"inventory_kind": "class_with_method", "method_name": "dataReceived"}
        data.update(results=[row], count=1)
        text = summarize_envelope("inspect_code_inventory", derived(data))
        self.assertIn('1 class with the method for "dataReceived"', text)
        self.assertIn("twisted/conch/ssh/agent.py:32 SSHAgentClient.dataReceived", text)

    def test_dead_code_names_candidates_and_the_maturity_caveat(self):
        for shape, make in SHAPES.items():
            row = make("do", "twisted/_threads/_ithreads.py", 28, owner="IWorker")
            row["classification"] = "unused"
            data = {
                "results": [row],
                "truncated": False,
                "analysis": {"dead_code_language_maturity": {"python": "derived"}},
            }
            text = summarize_envelope("find_dead_code", derived(data))
            self.assertIn("1 dead-code candidate", text, shape)
            self.assertIn("twisted/_threads/_ithreads.py:28 IWorker.do (Function) unused", text)
            self.assertIn("reachability python derived", text)
            same = summarize_envelope("analyze_code_relationships", derived(data))
            self.assertEqual(same, text)

    def test_dead_code_says_why_a_candidate_is_ambiguous(self):
        rows = [
            {
                "name": "setBaudRate",
                "file_path": "twisted/internet/serialport.py",
                "start_line": 60,
                "classification": "ambiguous",
                "ambiguity_reasons": ["python.public_api:twisted.internet.serialport.SerialPort"],
            },
            {
                "name": "startDocument",
                "file_path": "twisted/web/_flatten.py",
                "start_line": 9,
                "classification": "ambiguous",
                "ambiguity_reasons": ["python.may_override_outside_base:handler.ContentHandler"],
            },
        ]
        text = summarize_envelope("find_dead_code", derived({"results": rows}))
        self.assertIn(
            "setBaudRate ambiguous: public API as twisted.internet.serialport.SerialPort;"
            " code outside the repository may use it",
            text,
        )
        self.assertIn(
            "startDocument ambiguous: may override a method of handler.ContentHandler"
            " (outside the repository)",
            text,
        )

    def test_a_page_of_dead_code_says_how_many_there_are_in_all(self):
        rows = [{"name": f"f{i}", "file_path": "a.py", "start_line": i} for i in range(1, 4)]
        data = {"results": rows, "active_candidates": 160, "next_offset": 3, "truncated": True}
        text = summarize_envelope("find_dead_code", derived(data))
        self.assertIn("3 of 160 dead-code candidates; more: call again with offset=3", text)

    def test_dead_code_says_how_many_are_cleanup_ready(self):
        rows = [{"name": "f", "file_path": "a.py", "start_line": 1, "classification": "unused"}]
        data = {
            "results": rows,
            "active_candidates": 119,
            "active_by_classification": {"ambiguous": 110, "unused": 9},
        }
        text = summarize_envelope("find_dead_code", derived(data))
        self.assertIn("1 of 119 dead-code candidates; of all: 110 ambiguous (public API", text)
        self.assertIn(
            "9 unused (cleanup-ready); the rows marked unused are the cleanup-ready ones", text
        )

    def test_dead_code_investigation_counts_buckets_and_lists_cleanup_ready_first(self):
        data = {
            "bucket_counts": {"cleanup_ready": 92, "ambiguous": 8, "suppressed": 50},
            "candidate_buckets": {
                "cleanup_ready": [full_entity("perform", "twisted/_threads/_memory.py", 72)],
                "ambiguous": [full_entity("grow", "twisted/_threads/_team.py", 117)],
            },
            "coverage": {"active_candidates_seen": 797},
            "next_offset": 100,
        }
        lines = summarize_envelope("investigate_dead_code", derived(data)).splitlines()
        self.assertIn("92 cleanup-ready, 8 ambiguous, 50 suppressed", lines[0])
        self.assertIn("offset=100", lines[0])
        self.assertEqual(
            lines[1:3], ["cleanup-ready:", "twisted/_threads/_memory.py:72 perform (Function)"]
        )

    def test_most_complex_functions_show_their_complexity(self):
        row = full_entity("_tokenize", "twisted/persisted/_tokenize.py", 613, complexity=52)
        text = summarize_envelope("find_most_complex_functions", derived({"results": [row]}))
        self.assertIn("twisted/persisted/_tokenize.py:613 _tokenize (Function) complexity 52", text)

    def test_one_function_complexity(self):
        data = full_entity("_runCallbacks", "twisted/internet/defer.py", 997, owner="Deferred")
        data.update(complexity=19, incoming_count=7, outgoing_count=5)
        self.assertEqual(
            summarize_envelope("calculate_cyclomatic_complexity", derived(data)),
            "derived/fresh — Deferred._runCallbacks (twisted/internet/defer.py:997-1006): "
            "cyclomatic complexity 19; 7 incoming, 5 outgoing relationships",
        )

    def test_code_quality_rows_say_why(self):
        row = full_entity("rebuild", "twisted/python/rebuild.py", 118)
        row.update(complexity=33, line_count=115, argument_count=2, reasons=["long_function"])
        data = {"check": "refactoring_candidates", "results": [row]}
        text = summarize_envelope("inspect_code_quality", derived(data))
        self.assertIn("1 refactoring candidate", text)
        self.assertIn("rebuild.py:118 rebuild (Function) complexity 33; lines 115; args 2;", text)

    def test_imports_read_as_file_line_imports_module(self):
        row = {"source_file": "twisted/internet/defer.py", "line_number": 15}
        row.update(target_module="abc", imported_name="ABC", alias="")
        data = {"query_type": "imports_by_file", "dependencies": [row], "count": 1}
        data["scope"] = {"source_file": "twisted/internet/defer.py"}
        text = summarize_envelope("investigate_import_dependencies", derived(data))
        self.assertEqual(
            text.splitlines(),
            [
                'derived/fresh — 1 import for "twisted/internet/defer.py"',
                "twisted/internet/defer.py:15 imports abc.ABC",
            ],
        )

    def test_relative_imports_name_the_file_they_resolve_to(self):
        rows = [
            {"source_file": "rich/a.py", "line_number": 1, "target_module": ".cells"},
            {"source_file": "rich/b.py", "line_number": 2, "target_module": "."},
        ]
        rows[0].update(imported_name="cell_len", target_file="rich/cells.py")
        rows[1].update(imported_name="cells", target_file="rich/cells.py")
        data = {"query_type": "importers", "dependencies": rows, "count": 2}
        lines = summarize_envelope("investigate_import_dependencies", derived(data)).splitlines()
        self.assertEqual(
            lines[1:],
            [
                "rich/a.py:1 imports .cells.cell_len (rich/cells.py)",
                "rich/b.py:2 imports .cells (rich/cells.py)",
            ],
        )

    def test_names_one_statement_imports_read_as_one_line(self):
        rows = []
        for name in ("Awaitable", "Coroutine", "Generator"):
            rows.append({"source_file": "defer.py", "line_number": 17, "imported_name": name})
            rows[-1]["target_module"] = "collections.abc"
        rows.append({"source_file": "defer.py", "line_number": 18, "target_module": "attr"})
        aliased = {"source_file": "defer.py", "line_number": 19, "target_module": "contextvars"}
        aliased.update(imported_name="Context", alias="_Context")
        data = {"query_type": "imports_by_file", "dependencies": [*rows, aliased], "count": 5}
        lines = summarize_envelope("investigate_import_dependencies", derived(data)).splitlines()
        self.assertEqual(
            lines[1:],
            [
                "defer.py:17 imports collections.abc: Awaitable, Coroutine, Generator",
                "defer.py:18 imports attr",
                "defer.py:19 imports contextvars.Context as _Context",
            ],
        )

    def test_secrets_show_kind_severity_and_the_redacted_excerpt(self):
        row = {"relative_path": "twisted/conch/checkers.py", "line_number": 66}
        row.update(
            finding_kind="password_literal", severity="high", redacted_excerpt="pwd: [REDACTED]"
        )
        data = {"findings": [row], "count": 1, "coverage": {"suppressed_count": 1}}
        text = summarize_envelope("investigate_hardcoded_secrets", derived(data))
        self.assertIn("1 possible hardcoded secret; values redacted; 1 suppressed", text)
        self.assertIn("twisted/conch/checkers.py:66 password_literal (high): pwd: [REDACTED]", text)

    def test_topic_lists_evidence(self):
        group = {"relative_path": "twisted/internet/_newtls.py", "entity_name": "startTLS"}
        data = {"topic": "TLS", "evidence_groups": [group], "matched_files": [], "count": 1}
        data["matched_symbols"] = [group]
        text = summarize_envelope("investigate_code_topic", derived(data))
        self.assertIn('1 match for "TLS"; 1 definition, 0 files', text)
        self.assertIn("twisted/internet/_newtls.py startTLS", text)

    def test_topic_rows_lead_with_place_name_and_why(self):
        method = {
            "source_kind": "entity",
            "relative_path": "twisted/internet/defer.py",
            "start_line": 759,
            "entity_name": "addTimeout",
            "qualified_name": "Deferred.addTimeout",
            "entity_type": "Function",
            "why": "name: timeout; doc: cancel",
        }
        changelog = {
            "source_kind": "file",
            "document_kind": "documentation",
            "relative_path": "NEWS.rst",
            "start_line": 1,
            "why": "text: timeout",
        }
        data = {"topic": "give up", "evidence_groups": [method, changelog], "count": 2}
        lines = summarize_envelope("investigate_code_topic", derived(data)).splitlines()
        self.assertEqual(
            lines[1],
            "twisted/internet/defer.py:759 Deferred.addTimeout (Function)"
            " matched name: timeout; doc: cancel",
        )
        self.assertEqual(lines[2], "NEWS.rst:1 (documentation) matched text: timeout")

    def test_semantic_results_name_the_definition_and_the_similarity(self):
        result = {
            "rank": 1,
            "score": 0.91,
            "search_method": "semantic",
            "why": "name: timeout; similarity 0.91",
            "document": {
                "title": "Function addTimeout",
                "qualified_name": "Deferred.addTimeout",
                "path": "twisted/internet/defer.py",
                "start_line": 759,
                "source_kind": "code_entity",
                "labels": ["language:python", "kind:Function"],
            },
        }
        data = {"query": "give up", "results": [result], "search_mode": "semantic"}
        data["retrieval_state"] = "semantic_active"
        lines = summarize_envelope("search_semantic_context", derived(data)).splitlines()
        self.assertIn('1 result for "give up"; semantic ranking', lines[0])
        self.assertEqual(
            lines[1],
            "twisted/internet/defer.py:759 Deferred.addTimeout (Function)"
            " matched name: timeout; similarity 0.91",
        )
        data["retrieval_state"] = "semantic_unavailable"
        data["semantic_unavailable_reason"] = "install it with pip install 'eshu-mcp[semantic]'"
        text = summarize_envelope("search_semantic_context", derived(data))
        self.assertIn("semantic ranking unavailable, keyword shown", text.splitlines()[0])
        self.assertIn("eshu-mcp[semantic]", text.splitlines()[-1])

    def test_rows_cut_to_the_budget_leave_the_hint_to_the_dispatch_note(self):
        rows = [full_entity(f"f{i}", "a.py", i) for i in range(3)]
        data = {"results": rows, "count": 3, "limit": 50, "offset": 0, "truncated": True}
        data["truncation_note"] = "Only the first 3 of 50 results fit the response budget."
        text = summarize_envelope("find_code", derived(data))
        self.assertEqual(text.splitlines()[0], "derived/fresh — 3 matches")
