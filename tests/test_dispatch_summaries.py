"""Text summaries: the answer first, bounded, deterministic, and never raising."""

import copy

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.dispatch.summaries.result import go_value_text, summarize_envelope, summarize_plain
from tests.answer_rows import derived, edge, envelope, full_entity, truth, utf8_len

STORY = {
    "service_identity": {
        "service_name": "payments-api",
        "limitations": ["identity_only materialization", "no deployment evidence"],
    },
    "api_surface": {"endpoint_count": 12, "truncated": True},
    "result_limits": {"upstream_count": 3, "downstream_count": 7},
}
INVESTIGATION = {
    "service_name": "checkout",
    "investigation_findings": [{"id": 1}, {"id": 2}],
    "coverage_summary": {"state": "partial", "truncated": True},
    "recommended_next_calls": [{"tool": "get_service_story"}, {"tool": "other"}],
}
INCIDENT = {
    "incident": {"title": "checkout latency spike", "provider_incident_id": "INC-1"},
    "related_changes": [{}, {}],
    "missing_evidence": ["deploy"],
    "ambiguous_evidence": ["owner"],
    "truncated": True,
}
CITATION = {
    "coverage": {
        "resolved_count": 4,
        "input_handle_count": 6,
        "missing_count": 2,
        "truncated": True,
    }
}


class WorkedExampleTests(SynchronousTestCase):
    """Spec §10.4's worked examples: the families Eshu defines keep the Go reference's text."""

    def test_story(self):
        self.assertEqual(
            summarize_envelope("get_service_story", envelope(STORY)),
            "exact/fresh — payments-api; API surface 12 (truncated); deps 3; consumers 7; "
            "top limitation: identity_only materialization (+1 more)",
        )

    def test_investigation(self):
        self.assertEqual(
            summarize_envelope("investigate_service", envelope(INVESTIGATION, "derived")),
            "derived/fresh — checkout — 2 finding(s) (truncated); coverage partial; "
            "next: get_service_story",
        )

    def test_incident(self):
        self.assertEqual(
            summarize_envelope("get_incident_context", envelope(INCIDENT, "derived")),
            "derived/fresh — checkout latency spike — 2 related change(s); missing evidence 1; "
            "ambiguous 1; truncated",
        )

    def test_citation(self):
        self.assertEqual(
            summarize_envelope("build_evidence_citation_packet", envelope(CITATION, "derived")),
            "derived/fresh — coverage: resolved 4/requested 6; missing 2 (truncated)",
        )

    def test_generic_count(self):
        self.assertEqual(
            summarize_envelope("find_code", envelope({"count": 5})),
            "exact/fresh — Returned 5 result(s).",
        )

    def test_stale_with_cause_and_multiline_detail(self):
        env = envelope(
            {"count": 2},
            "derived",
            "stale",
            cause="dead_lettered_domain",
            detail="reducer\nprojection",
        )
        self.assertEqual(
            summarize_envelope("some_unknown_tool", env),
            "derived/stale (cause: dead_lettered_domain; reducer projection) — "
            "Returned 2 result(s).",
        )

    def test_story_while_building(self):
        env = envelope(
            {"service_identity": {"service_name": "svc"}},
            "derived",
            "building",
            detail="reducer projection in progress",
        )
        self.assertEqual(
            summarize_envelope("get_service_story", env),
            "derived/building (reducer projection in progress) — svc; API surface 0; deps 0; "
            "consumers 0",
        )

    def test_no_results_says_nothing_was_found(self):
        self.assertEqual(
            summarize_envelope("find_code", envelope({"results": [], "query": "Nope"})),
            'exact/fresh — No matches found for "Nope"',
        )

    def test_error_envelope(self):
        env = {
            "data": None,
            "truth": truth(),
            "error": {
                "code": "index_building",
                "message": "index is still building for this scope",
            },
        }
        self.assertEqual(
            summarize_envelope("find_code", env),
            "error index_building: index is still building for this scope",
        )

    def test_plain_index_status(self):
        value = {"status": "degraded", "reasons": ["queue backlog growing", "stale projections"]}
        self.assertEqual(
            summarize_plain("get_index_status", value),
            "index status: degraded — queue backlog growing (+1 more)",
        )

    def test_plain_object_without_counts(self):
        self.assertEqual(
            summarize_plain("list_indexed_repositories", {"repos": ["test/repo"]}),
            "Eshu query completed.",
        )

    def test_plain_array(self):
        self.assertEqual(summarize_plain("anything", [1, 2, 3]), "Returned 3 result(s).")


class BoundTests(SynchronousTestCase):
    def test_long_headline_is_cut_to_597_bytes_plus_ellipsis(self):
        env = envelope({"count": "x" * 1000})
        text = summarize_envelope("find_code", env)
        self.assertEqual(utf8_len(text), 600)
        self.assertTrue(text.endswith("x..."))

    def test_summary_of_exactly_600_bytes_is_not_cut(self):
        message = "m" * (600 - len("error c: "))
        env = {"data": None, "truth": None, "error": {"code": "c", "message": message}}
        self.assertEqual(summarize_envelope("t", env), "error c: " + message)

    def test_fields_are_flattened_trimmed_and_capped_at_120_bytes(self):
        name = "  line one\nline two " + "n" * 200
        text = summarize_envelope(
            "get_service_story", envelope({"service_identity": {"service_name": name}})
        )
        field = "line one line two " + "n" * (117 - len("line one line two ")) + "..."
        self.assertEqual(text, f"exact/fresh — {field}; API surface 0; deps 0; consumers 0")

    def test_4000_character_service_name_stays_within_600_bytes(self):
        story = {"service_identity": {"service_name": "s" * 4000, "limitations": ["l" * 4000]}}
        text = summarize_envelope("get_service_story", envelope(story))
        self.assertLessEqual(utf8_len(text), 600)

    def test_field_clamp_never_splits_a_multibyte_character(self):
        # 116 ASCII bytes then "é": byte 117 is the middle of "é", so the cut backs up.
        name = "a" * 116 + "é" * 10
        text = summarize_envelope(
            "get_service_story", envelope({"service_identity": {"service_name": name}})
        )
        self.assertIn("— " + "a" * 116 + "...;", text)
        text.encode("utf-8", "strict")

    def test_summary_clamp_never_splits_a_multibyte_character(self):
        message = "x" + "€" * 300  # byte 597 falls inside the 199th "€"
        env = {"data": None, "truth": None, "error": {"code": "", "message": message}}
        text = summarize_envelope("t", env)
        self.assertEqual(text, "x" + "€" * 198 + "...")
        self.assertEqual(utf8_len(text), 598)

    def test_row_lines_never_split_a_multibyte_character(self):
        rows = [{"name": "é" * 400, "file_path": "a.py", "start_line": 1}]
        text = summarize_envelope("find_code", envelope({"results": rows, "count": 1}))
        row = text.splitlines()[1]
        self.assertLessEqual(utf8_len(row), 240)
        self.assertTrue(row.endswith("..."))
        text.encode("utf-8", "strict")


class EnvelopeSummaryTests(SynchronousTestCase):
    def test_error_summary_has_no_truth_prefix(self):
        env = {
            "data": {"count": 1},
            "truth": truth(),
            "error": {"code": "not_found", "message": "x"},
        }
        self.assertEqual(summarize_envelope("find_code", env), "error not_found: x")

    def test_error_without_code_or_message(self):
        env = {"data": None, "truth": None, "error": {"code": " ", "message": ""}}
        self.assertEqual(summarize_envelope("t", env), "Eshu query returned an error.")

    def test_error_with_code_only_or_message_only(self):
        only_code = {"data": None, "truth": None, "error": {"code": "overloaded", "message": ""}}
        only_message = {"data": None, "truth": None, "error": {"code": "", "message": " busy "}}
        self.assertEqual(summarize_envelope("t", only_code), "error overloaded")
        self.assertEqual(summarize_envelope("t", only_message), "busy")

    def test_truth_prefix_joins_with_an_em_dash(self):
        text = summarize_envelope("find_code", envelope({"count": 1}, "fallback", "fresh"))
        self.assertEqual(text, "fallback/fresh \u2014 Returned 1 result(s).")

    def test_fresh_answers_never_show_a_cause(self):
        env = envelope({"count": 1}, cause="reducer_backlog", detail="d")
        self.assertNotIn("cause:", summarize_envelope("find_code", env))

    def test_stale_cause_without_detail(self):
        env = envelope({}, "derived", "stale", cause="reducer_backlog")
        self.assertEqual(
            summarize_envelope("some_tool", env),
            "derived/stale (cause: reducer_backlog) — Eshu query completed.",
        )

    def test_only_level_or_only_state(self):
        only_level = {"data": {}, "truth": {"level": "exact", "freshness": {"state": ""}}}
        only_state = {
            "data": {},
            "truth": {"level": "", "freshness": {"state": "stale", "detail": "d"}},
        }
        self.assertEqual(summarize_envelope("t", only_level), "exact — Eshu query completed.")
        self.assertEqual(summarize_envelope("t", only_state), "stale — Eshu query completed.")

    def test_no_truth_and_a_list_of_scalars(self):
        env = {"data": [1, 2], "truth": None, "error": None}
        self.assertEqual(summarize_envelope("find_code", env), "Returned 2 result(s).")

    def test_affected_count(self):
        env = envelope({"affected_count": 4})
        self.assertEqual(summarize_envelope("t", env), "exact/fresh — Found 4 affected result(s).")

    def test_counts_render_like_go_percent_v(self):
        cases = {
            1000000: "1e+06",
            1234567: "1.234567e+06",
            999999: "999999",
            1.5: "1.5",
            "12": "12",
            None: "<nil>",
        }
        for count, rendered in cases.items():
            self.assertEqual(
                summarize_envelope("t", envelope({"count": count})),
                f"exact/fresh — Returned {rendered} result(s).",
            )

    def test_story_prefers_answer_metadata_limitations(self):
        story = copy.deepcopy(STORY)
        story["answer_metadata"] = {
            "limitations": [{"slot": "s"}, "not-a-row", {"reason": "metadata limitation"}],
        }
        text = summarize_envelope("get_service_story", envelope(story))
        self.assertIn("; top limitation: s (+1 more)", text)
        story["answer_metadata"]["limitations"] = [{"reason": "metadata limitation"}]
        text = summarize_envelope("get_workload_story", envelope(story))
        self.assertTrue(text.endswith("; top limitation: metadata limitation"), text)

    def test_story_falls_back_to_service_id_and_metadata_truncation(self):
        story = {
            "service_identity": {"service_id": "workload:pay"},
            "api_surface": {"endpoint_count": 2.9},
            "answer_metadata": {"truncated": True},
        }
        self.assertEqual(
            summarize_envelope("get_service_story", envelope(story)),
            "exact/fresh — workload:pay; API surface 2 (truncated); deps 0; consumers 0",
        )

    def test_investigation_without_optional_parts(self):
        self.assertEqual(
            summarize_envelope("investigate_service", envelope({})),
            "exact/fresh — service — 0 finding(s)",
        )

    def test_incident_missing_count_prefers_answer_metadata(self):
        incident = copy.deepcopy(INCIDENT)
        incident["answer_metadata"] = {"missing_evidence": [1, 2, 3]}
        incident["truncated"] = False
        self.assertEqual(
            summarize_envelope("get_incident_context", envelope(incident)),
            "exact/fresh — checkout latency spike — 2 related change(s); missing evidence 3; "
            "ambiguous 1",
        )

    def test_incident_title_falls_back_to_provider_id(self):
        data = {"incident": {"provider_incident_id": "INC-9"}}
        self.assertIn(
            "INC-9 — 0 related change(s)",
            summarize_envelope("get_incident_context", envelope(data)),
        )

    def test_citation_needs_a_coverage_object(self):
        self.assertEqual(
            summarize_envelope("build_evidence_citation_packet", envelope({"count": 3})),
            "exact/fresh — Returned 3 result(s).",
        )

    def test_visualization_supported_and_unsupported(self):
        supported = {
            "visualization_packet": {
                "view": "graph",
                "supported": True,
                "nodes": [1, 2],
                "edges": [1],
            }
        }
        unsupported = {
            "visualization_packet": {"view": " flow ", "limitations": ["no graph\nbackend"]}
        }
        bare = {"visualization_packet": {"view": "flow", "supported": False}}
        tool = "derive_visualization_packet"
        self.assertEqual(
            summarize_envelope(tool, envelope(supported)),
            "exact/fresh — visualization graph: 2 node(s), 1 edge(s)",
        )
        self.assertEqual(
            summarize_envelope(tool, envelope(unsupported)),
            "exact/fresh — visualization flow unsupported: no graph backend",
        )
        self.assertEqual(
            summarize_envelope(tool, envelope(bare)), "exact/fresh — visualization flow unsupported"
        )

    def test_family_tools_with_non_object_data_use_generic_text(self):
        self.assertEqual(
            summarize_envelope("get_service_story", envelope(["x"])),
            "exact/fresh — Returned 1 result(s).",
        )

    def test_non_string_fields_render_with_percent_v(self):
        data = {"service_identity": {"service_name": 42}}
        self.assertIn(
            "— 42; API surface 0", summarize_envelope("get_service_story", envelope(data))
        )


class PlainSummaryTests(SynchronousTestCase):
    def test_index_status_single_reason_and_no_reason(self):
        self.assertEqual(
            summarize_plain("get_index_status", {"status": "healthy", "reasons": ["ok"]}),
            "index status: healthy — ok",
        )
        self.assertEqual(
            summarize_plain("get_index_status", {"status": "healthy"}), "index status: healthy"
        )

    def test_index_status_counts_repositories_and_waiting_builds(self):
        data = {
            "status": "healthy",
            "repository_count": 2,
            "scope_activity": {"active": 2, "changed": 1, "unchanged": 1},
            "queue": {"outstanding": 1, "oldest_outstanding_age": "3s"},
        }
        self.assertEqual(
            summarize_plain("get_index_status", data),
            "index status: healthy (2 repositories indexed, 1 changed since the last build;"
            " 1 build waiting (oldest 3s))",
        )

    def test_index_status_without_status_uses_generic_text(self):
        self.assertEqual(summarize_plain("get_index_status", {"count": 2}), "Returned 2 result(s).")

    def test_hosted_readiness(self):
        value = {"state": "blocked", "failure_classes": ["missing_collector"]}
        self.assertEqual(
            summarize_plain("get_hosted_readiness", value),
            "hosted readiness: blocked — missing_collector",
        )

    def test_ingester_status_with_and_without_state(self):
        self.assertEqual(
            summarize_plain("get_ingester_status", {"ingester": "git"}), "ingester git: unknown"
        )
        value = {"ingester": "git", "health": {"state": "degraded", "reasons": ["a", "b", "c"]}}
        self.assertEqual(
            summarize_plain("get_ingester_status", value), "ingester git: degraded — a (+2 more)"
        )

    def test_registered_lists(self):
        self.assertEqual(
            summarize_plain("list_ingesters", {"ingesters": [1, 2]}), "2 ingester(s) registered"
        )
        self.assertEqual(
            summarize_plain("list_collectors", {"collectors": None}), "0 collector(s) registered"
        )
        self.assertEqual(summarize_plain("list_collectors", {}), "Eshu query completed.")

    def test_collectors_name_the_local_evidence_they_found(self):
        row = {"collector_kind": "git", "evidence_sources": ["git", "documentation", "kubernetes"]}
        self.assertEqual(
            summarize_plain("list_collectors", {"collectors": [row]}),
            "1 collector(s) registered; local evidence read from the repositories:"
            " documentation, kubernetes",
        )
        row["evidence_sources"] = ["git"]
        self.assertEqual(
            summarize_plain("list_collectors", {"collectors": [row]}),
            "1 collector(s) registered; no local collector found files it reads",
        )

    def test_generic_count_keys_in_order(self):
        value = {"total_identities": 9, "total": 3}
        self.assertEqual(summarize_plain("t", value), "Returned 3 result(s).")

    def test_a_plain_state_is_stated_with_its_reason(self):
        value = {"state": "unavailable", "reason": "no provider", "supported_states": ["x"]}
        self.assertEqual(
            summarize_plain("get_semantic_capability_status", value),
            "state: unavailable — no provider",
        )

    def test_scalars_and_strings(self):
        for value in ("hello", 5, None, True):
            self.assertEqual(summarize_plain("t", value), "Eshu query completed.")


class PurityTests(SynchronousTestCase):
    def test_summaries_do_not_mutate_and_are_deterministic(self):
        env = envelope(copy.deepcopy(STORY), "derived", "stale", cause="reducer_backlog")
        before = copy.deepcopy(env)
        first = summarize_envelope("get_service_story", env)
        self.assertEqual(summarize_envelope("get_service_story", env), first)
        self.assertEqual(env, before)
        value = {"status": "degraded", "reasons": ["x", "y"]}
        summarize_plain("get_index_status", value)
        self.assertEqual(value, {"status": "degraded", "reasons": ["x", "y"]})

    def test_go_value_text_renders_maps_sorted(self):
        self.assertEqual(go_value_text({"b": [1, None], "a": True}), "map[a:true b:[1 <nil>]]")


class SafetyTests(SynchronousTestCase):
    """No answer shape can make a summary raise or outgrow its bound."""

    WEIRD_VALUES = (
        None,
        "",
        "text",
        0,
        -1,
        2.5,
        True,
        [],
        [None, 1, "x", [], {}],
        {},
        {"name": ["not", "text"], "file_path": 7, "start_line": "12"},
        {"nested": {"deeper": [{"name": None}]}},
        float("nan"),
    )
    KEYS = (
        "results",
        "matches",
        "relationships",
        "target_resolution",
        "class_hierarchy",
        "chains",
        "candidate_buckets",
        "bucket_counts",
        "override_story",
        "coverage",
        "scope",
        "content",
        "source_cache",
        "categories",
        "entries",
        "repositories",
        "findings",
        "dependencies",
        "count",
        "next_offset",
        "truncated",
        "story",
        "verdict",
        "complexity",
        "generations",
        "playbooks",
    )

    def tools(self):
        """Every tool with a family of its own, and one that takes the generic path."""
        from eshu_mcp.dispatch.summaries.result import ANSWER_FAMILIES, PLAIN_FAMILIES

        return sorted({*ANSWER_FAMILIES, *PLAIN_FAMILIES, "list_kubernetes_correlations"})

    def test_every_tool_survives_every_odd_value_in_every_key(self):
        for tool in self.tools():
            for key in self.KEYS:
                for value in self.WEIRD_VALUES:
                    for data in ({key: value}, {key: [value, value]}, {key: {key: value}}):
                        text = summarize_envelope(tool, derived(data))
                        self.assertIsInstance(text, str)
                        self.assertLessEqual(utf8_len(text), 4096)
                        plain = summarize_plain(tool, data)
                        self.assertLessEqual(utf8_len(plain), 4096)

    def test_huge_answers_stay_within_4_kib(self):
        rows = [full_entity("n" * 300, "p/" * 200, i) for i in range(5000)]
        huge = {
            "results": rows,
            "content": "x" * 500_000,
            "source_cache": "y\n" * 100_000,
            "relationships": [edge("a" * 500, "b" * 500, "c" * 500, 1)] * 500,
            "chains": [{"chain": rows[:300]}] * 50,
            "categories": [{"category": "files", "counts": {"added": 1}}] * 1000,
        }
        for tool in self.tools():
            text = summarize_envelope(tool, derived(huge))
            self.assertLessEqual(utf8_len(text), 4096, tool)
            self.assertLessEqual(utf8_len(text.splitlines()[0]), 600, tool)
            for line in text.splitlines()[1:]:
                self.assertLessEqual(utf8_len(line), 240, tool)

    def test_a_cut_summary_says_it_was_cut(self):
        nodes = [full_entity(f"f{i}_" + "x" * 150, "p.py", i) for i in range(60)]
        text = summarize_envelope(
            "find_function_call_chain", derived({"chains": [{"chain": nodes}]})
        )
        self.assertLessEqual(utf8_len(text), 4096)
        self.assertTrue(
            text.endswith(
                "... (summary cut at 4 KiB; the structured content holds the whole answer)"
            )
        )

    def test_not_a_number_counts_render_as_go_does(self):
        self.assertEqual(go_value_text(float("nan")), "NaN")
        self.assertEqual(go_value_text(float("-inf")), "-Inf")

    def test_a_family_that_fails_falls_back_to_the_generic_text_and_is_logged(self):
        from eshu_mcp.dispatch.summaries.result import _family_lines

        def broken(data):
            raise ZeroDivisionError("a bug in a family")

        self.assertEqual(_family_lines("t", {"results": []}, {"t": broken}), [])
        self.assertEqual(len(self.flushLoggedErrors(ZeroDivisionError)), 1)
