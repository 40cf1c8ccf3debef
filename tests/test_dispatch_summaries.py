"""Text summaries: the answer first, bounded, deterministic, and never raising."""

import copy

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.dispatch.summaries import go_value_text, summarize_envelope, summarize_plain


def truth(level="exact", state="fresh", **freshness):
    return {"level": level, "freshness": {"state": state, **freshness}}


def envelope(data, level="exact", state="fresh", **freshness):
    return {"data": data, "truth": truth(level, state, **freshness), "error": None}


def utf8_len(text: str) -> int:
    return len(text.encode("utf-8"))


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
    """Every worked example of spec §10.4, verbatim."""

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

    def test_generic_count_keys_in_order(self):
        value = {"total_identities": 9, "total": 3}
        self.assertEqual(summarize_plain("t", value), "Returned 3 result(s).")

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


# Answers as the embedded backend gives them, in Eshu's full shape and a compact one --


def full_entity(name, path, line, kind="Function", owner=None, **extra):
    """An entity row in Eshu's full shape: source, labels, metadata, source handle."""
    metadata = {"args": ["self"], "docstring": "d" * 300}
    if owner:
        metadata["class_context"] = owner
    return {
        "end_line": line + 9,
        "entity_id": f"content-entity:e_{name.lower()}",
        "entity_name": name,
        "entity_type": kind,
        "file_path": path,
        "labels": [kind],
        "language": "python",
        "metadata": metadata,
        "name": name,
        "relative_path": path,
        "repo_id": "repository:r_1",
        "repo_name": "twisted",
        "source_cache": f"def {name}(self):\n" + "    pass\n" * 40,
        "source_handle": {"relative_path": path, "start_line": line, "end_line": line + 9},
        "start_line": line,
        **extra,
    }


def compact_entity(name, path, line, kind="Function", owner=None, **extra):
    """The same row trimmed: a snippet, no aliases, no repeated blocks, other key names."""
    row = {"entity_id": f"content-entity:e_{name.lower()}", "name": name, "path": path}
    row.update({"line": line, "type": kind, "source": f"def {name}(self):", **extra})
    row["source_truncated"] = True
    if owner:
        row["class_name"] = owner
    return row


SHAPES = {"full": full_entity, "compact": compact_entity}


def edge(source, target, path, line, *, direction="incoming", kind="CALLS", compact=False):
    row = {
        "direction": direction,
        "type": kind,
        "line_number": line,
        "source_name": source,
        "source_file_path": path,
        "target_name": target,
        "target_file_path": "twisted/internet/defer.py",
        "target_start_line": 1597,
    }
    if compact:
        # The envelope states the anchor once: rows keep only the other end.
        del row["target_file_path"], row["target_start_line"]
        if direction == "incoming":
            del row["target_name"]
        else:
            del row["source_name"]
    else:
        row["provenance"] = {"truth_state": "derived", "heuristic": False}
        row["source_handle"] = "entity:content-entity:e_1"
    return row


def relationship_story(
    rows, *, direction="incoming", kind="CALLS", available=None, truncated=False
):
    return {
        "relationships": rows,
        "scope": {"direction": direction, "relationship_type": kind, "limit": 25, "offset": 0},
        "coverage": {
            "available_by_direction": {direction: available or len(rows)},
            "truncated": truncated,
            "missing_edge_reason": "truncated_by_limit" if truncated else "complete",
        },
        "target_resolution": {
            "status": "resolved",
            "name": "gatherResults",
            "target": "gatherResults",
            "entity_id": "content-entity:e_g",
        },
    }


def derived(data, state="fresh"):
    return envelope(data, "derived", state)


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
        self.assertIn("... 15 more rows in the structured content", text)
        self.assertEqual(len(text.splitlines()), 12)
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
        self.assertIn('1 evidence group for "TLS"; 0 files, 1 symbol', text)
        self.assertIn("twisted/internet/_newtls.py startTLS", text)


class GraphFamilySummaryTests(SynchronousTestCase):
    def test_callers_read_as_call_sites_in_both_shapes(self):
        for compact in (False, True):
            rows = [
                edge(
                    "getConnectedClientAndServer",
                    "gatherResults",
                    "t/test_tcp.py",
                    2681,
                    compact=compact,
                ),
                edge("_listSetup", "gatherResults", "t/test_imap.py", 2576, compact=compact),
            ]
            data = relationship_story(rows, available=175, truncated=True)
            lines = summarize_envelope("analyze_code_relationships", derived(data)).splitlines()
            self.assertEqual(
                lines,
                [
                    "derived/fresh — 2 of 175 callers of gatherResults; "
                    "more: call again with offset=25",
                    "t/test_tcp.py:2681 getConnectedClientAndServer -> gatherResults",
                    "t/test_imap.py:2576 _listSetup -> gatherResults",
                ],
                compact,
            )

    def test_callees_name_where_the_callee_is_defined(self):
        row = edge(
            "addCallbacks", "_runCallbacks", "twisted/internet/defer.py", 532, direction="outgoing"
        )
        data = relationship_story([row], direction="outgoing")
        data["target_resolution"]["name"] = "addCallbacks"
        text = summarize_envelope("get_code_relationship_story", derived(data))
        self.assertEqual(
            text,
            "derived/fresh — 1 callee of addCallbacks\n"
            "twisted/internet/defer.py:532 addCallbacks -> _runCallbacks "
            "(twisted/internet/defer.py:1597)",
        )

    def test_other_relationship_types_use_a_verb(self):
        row = edge("ConsumingProtocol", "LineReceiver", "t/test_basic.py", 1101, kind="INHERITS")
        text = summarize_envelope(
            "analyze_code_relationships", derived(relationship_story([row], kind="INHERITS"))
        )
        self.assertIn("1 subclass of gatherResults", text)
        self.assertIn("t/test_basic.py:1101 ConsumingProtocol inherits LineReceiver", text)

    def test_heuristic_edges_are_flagged(self):
        row = edge("a", "b", "x.py", 1)
        row["provenance"] = {"truth_state": "heuristic"}
        text = summarize_envelope("analyze_code_relationships", derived(relationship_story([row])))
        self.assertIn("1 heuristic (correlation evidence, not canonical code truth)", text)

    def test_ambiguous_target_lists_candidates_with_entity_ids(self):
        data = relationship_story([])
        data["target_resolution"] = {
            "status": "ambiguous",
            "target": "maybeDeferred",
            "candidates": [
                full_entity("maybeDeferred", "twisted/internet/defer.py", 152),
                compact_entity("maybeDeferred", "twisted/internet/defer.py", 159),
            ],
        }
        lines = summarize_envelope("analyze_code_relationships", derived(data)).splitlines()
        self.assertIn('target "maybeDeferred" is ambiguous: 2 candidates', lines[0])
        self.assertEqual(
            lines[1],
            "twisted/internet/defer.py:152 maybeDeferred (Function) "
            "entity_id=content-entity:e_maybedeferred",
        )

    def test_unresolved_target_says_so(self):
        data = relationship_story([])
        data["target_resolution"] = {"status": "unresolved", "target": "nope"}
        data["coverage"]["evidence_explanation"] = "no entity has this name"
        text = summarize_envelope("analyze_code_relationships", derived(data))
        self.assertEqual(
            text,
            'derived/fresh — target "nope" was not found (unresolved): no entity has this name',
        )

    def test_no_edges_says_why(self):
        data = relationship_story([])
        data["coverage"]["missing_edge_reason"] = "no_edges"
        data["coverage"]["evidence_explanation"] = "the call graph has no edge for this target"
        text = summarize_envelope("analyze_code_relationships", derived(data))
        self.assertEqual(
            text,
            "derived/fresh — No callers found for gatherResults; "
            "the call graph has no edge for this target",
        )

    def test_class_hierarchy_names_ancestors_and_subclasses(self):
        data = {
            "class_hierarchy": {
                "name": "LineReceiver",
                "ancestors": [{"name": "Protocol", "depth": 1}],
                "descendants": [
                    {"name": "Finger", "file_path": "twisted/protocols/finger.py", "type": "Class"}
                ],
            },
            "relationships": [],
        }
        lines = summarize_envelope("analyze_code_relationships", derived(data)).splitlines()
        self.assertEqual(
            lines,
            [
                "derived/fresh — class hierarchy of LineReceiver: 1 ancestor, 1 descendant",
                "LineReceiver inherits from: Protocol",
                "subclasses of LineReceiver:",
                "twisted/protocols/finger.py Finger (Class)",
            ],
        )

    def test_call_chain_reads_a_to_b_to_c(self):
        for shape, make in SHAPES.items():
            nodes = [
                make("cbEcho", "twisted/conch/test/test_ssh.py", 836),
                make("gatherResults", "twisted/internet/defer.py", 1597),
                make("DeferredList", "twisted/internet/defer.py", 1442, "Class"),
            ]
            data = {
                "start": "cbEcho",
                "end": "DeferredList",
                "chains": [{"chain": nodes, "depth": 2}],
            }
            for tool in ("find_function_call_chain", "analyze_code_relationships"):
                lines = summarize_envelope(tool, derived(data)).splitlines()
                self.assertEqual(
                    lines[:3],
                    [
                        'derived/fresh — 1 call chain for "cbEcho -> DeferredList"',
                        "cbEcho -> gatherResults -> DeferredList",
                        "  twisted/conch/test/test_ssh.py:836 cbEcho (Function)",
                    ],
                    shape,
                )

    def test_no_call_chain_says_nothing_was_found(self):
        data = {"start": "a", "end": "b", "chains": [], "max_depth": 5}
        self.assertEqual(
            summarize_envelope("find_function_call_chain", derived(data)),
            "derived/fresh — No call chain found from a to b within depth 5",
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

    def test_unknown_tools_list_the_first_rows_they_hold(self):
        data = {
            "partial_reasons": [{"x": 1}],
            "widgets": [{"name": "w1", "path": "a/b.py", "line": 3}],
        }
        self.assertEqual(
            summarize_envelope("some_new_tool", derived(data)),
            "derived/fresh — 1 widget\na/b.py:3 w1",
        )


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
        from eshu_mcp.dispatch.summaries import ANSWER_FAMILIES, PLAIN_FAMILIES

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
