"""Call-graph summaries: callers and callees at their call sites, hierarchies, chains."""

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.dispatch.summaries.result import summarize_envelope
from tests.answer_rows import (
    SHAPES,
    compact_entity,
    derived,
    edge,
    full_entity,
    relationship_story,
)


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

    def test_ambiguous_edges_are_marked_and_counted_with_the_way_to_leave_them_out(self):
        resolved = edge("_finishInit", "callLater", "t/tcp.py", 457)
        unknown = edge("_callback", "callLater", "t/test_inotify.py", 311)
        unknown["resolution_method"] = "ambiguous"
        unknown["provenance"] = {"truth_state": "heuristic"}
        lines = summarize_envelope(
            "analyze_code_relationships", derived(relationship_story([resolved, unknown]))
        ).splitlines()
        self.assertIn("1 shown ambiguous (the receiver's type, or the overload, is", lines[0])
        self.assertIn("min_confidence=0.5 leaves them out", lines[0])
        self.assertNotIn("heuristic", lines[0])
        self.assertEqual(lines[1], "t/tcp.py:457 _finishInit -> callLater")
        self.assertEqual(lines[2], "t/test_inotify.py:311 _callback -> callLater (ambiguous)")

    def test_one_caller_making_the_same_call_again_reads_as_one_line_with_every_site(self):
        rows = [edge("testExpunge", "addCallbacks", "t/test_imap.py", n) for n in range(2888, 2896)]
        rows += [edge("_listSetup", "addCallbacks", "t/test_imap.py", 2572)]
        rows += [edge(f"case{n}", "addCallbacks", "t/test_x.py", n) for n in range(1, 6)]
        lines = summarize_envelope(
            "analyze_code_relationships", derived(relationship_story(rows))
        ).splitlines()
        self.assertEqual(
            lines[1],
            "t/test_imap.py:2888,2889,2890,2891,2892,2893 (+2 more) testExpunge -> addCallbacks",
        )
        self.assertEqual(lines[2], "t/test_imap.py:2572 _listSetup -> addCallbacks")
        self.assertEqual(len(lines), 1 + 5 + 1)
        self.assertEqual(lines[-1], "... 2 more rows in the structured content")

    def test_property_reads_and_assignments_say_so_on_lines_of_their_own(self):
        rows = [edge("show", "owner", "acct/use.py", 5), edge("show", "owner", "acct/use.py", 6)]
        rows[0]["call_kind"] = "property_read"
        rows[1]["call_kind"] = "property_write"
        lines = summarize_envelope(
            "analyze_code_relationships", derived(relationship_story(rows))
        ).splitlines()
        self.assertEqual(
            lines[1:],
            [
                "acct/use.py:5 show -> owner (reads the property)",
                "acct/use.py:6 show -> owner (sets the property)",
            ],
        )

    def test_an_outgoing_compact_answer_lists_each_callee_once_with_its_lines(self):
        rows = [
            edge(
                "_parseCommand", "checkForUnknownOptions", "", n, direction="outgoing", compact=True
            )
            for n in (1496, 1513)
        ]
        for row in rows:
            del row["source_file_path"]
        data = relationship_story(rows, direction="outgoing")
        lines = summarize_envelope("analyze_code_relationships", derived(data)).splitlines()
        self.assertEqual(lines[1], "lines 1496,1513: gatherResults -> checkForUnknownOptions")

    def test_one_ambiguous_call_to_several_candidates_reads_as_one_line(self):
        rows = []
        for owner in ("Clock", "ReactorBase", "CFReactor"):
            row = edge("deferLater", "callLater", "task.py", 871, direction="outgoing")
            row.update(target_id=owner, resolution_method="ambiguous", target_file_path="")
            rows.append(row)
        data = relationship_story(rows, direction="outgoing")
        lines = summarize_envelope("analyze_code_relationships", derived(data)).splitlines()
        self.assertEqual(
            lines[1:],
            ["task.py:871 deferLater -> callLater (ambiguous: 3 of its candidates shown)"],
        )

    def test_a_method_every_compact_row_shares_marks_each_row(self):
        rows = [edge("a", "gatherResults", "x.py", 1, compact=True)]
        data = relationship_story(rows)
        data["relationships_shared"] = {"resolution_method": "ambiguous", "confidence": 0.12}
        lines = summarize_envelope("analyze_code_relationships", derived(data)).splitlines()
        self.assertEqual(lines[1], "x.py:1 a -> gatherResults (ambiguous)")

    def test_totals_under_a_confidence_floor_say_they_count_every_edge(self):
        rows = [edge("a", "gatherResults", "x.py", 1)]
        data = relationship_story(rows, available=175, truncated=True)
        data["scope"]["min_confidence"] = 0.5
        text = summarize_envelope("analyze_code_relationships", derived(data))
        self.assertIn("1 of 175 callers (counted before the min_confidence floor)", text)

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

    def test_a_name_no_definition_has_gets_advice_that_fits(self):
        data = relationship_story([])
        data["target_resolution"] = {"status": "unresolved", "target": "Failure.value"}
        data["coverage"]["evidence_explanation"] = (
            "the target did not resolve to exactly one entity; pick a candidate entity_id and retry"
        )
        text = summarize_envelope("analyze_code_relationships", derived(data))
        self.assertIn("no function, class or module in scope has that name", text)
        self.assertIn("find_symbol with match_mode fuzzy", text)
        self.assertNotIn("pick a candidate", text)

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

    def test_interfaces_a_class_implements_are_not_listed_as_its_bases(self):
        data = {
            "class_hierarchy": {
                "name": "LineReceiver",
                "ancestors": [
                    {"name": "Protocol", "depth": 1},
                    {"name": "IProtocol", "depth": 2, "relationship_type": "IMPLEMENTS"},
                ],
                "descendants": [],
            },
            "relationships": [],
        }
        lines = summarize_envelope("analyze_code_relationships", derived(data)).splitlines()
        self.assertEqual(lines[1], "LineReceiver inherits from: Protocol; implements: IProtocol")

    def test_classes_implementing_an_interface_say_so(self):
        data = {
            "class_hierarchy": {
                "name": "IProtocol",
                "ancestors": [],
                "descendants": [
                    {"name": "Protocol", "file_path": "p.py", "relationship_type": "IMPLEMENTS"},
                    {"name": "ITelnetProtocol", "file_path": "t.py"},
                ],
            },
            "relationships": [],
        }
        lines = summarize_envelope("analyze_code_relationships", derived(data)).splitlines()
        self.assertEqual(
            lines[1:],
            [
                "subclasses and implementations of IProtocol:",
                "p.py Protocol implements it",
                "t.py ITelnetProtocol",
            ],
        )

    def test_a_page_of_subclasses_says_how_many_there_are_and_where_the_next_starts(self):
        data = {
            "class_hierarchy": {
                "name": "Protocol",
                "ancestors": [],
                "descendants": [
                    {"name": "Finger", "file_path": "twisted/protocols/finger.py", "type": "Class"}
                ],
                "descendants_count": 341,
                "direct_descendant_count": 141,
                "descendants_truncated": True,
                "descendants_next_offset": 1,
            },
            "relationships": [],
        }
        lines = summarize_envelope("analyze_code_relationships", derived(data)).splitlines()
        self.assertEqual(
            lines[:2],
            [
                "derived/fresh — class hierarchy of Protocol: 0 ancestors, 1 of 341 descendants"
                " (141 direct)",
                "subclasses of Protocol (truncated), the next from offset=1:",
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

    def test_a_chain_marks_ambiguous_calls_and_names_each_call_line(self):
        start = {"name": "main", "file_path": "click/core.py", "start_line": 1483}
        middle = {
            "name": "invoke",
            "file_path": "click/core.py",
            "start_line": 1400,
            "called_at_line": 1560,
            "resolution_method": "ambiguous",
        }
        end = {
            "name": "invoke",
            "file_path": "click/core.py",
            "start_line": 861,
            "called_at_line": 1414,
            "resolution_method": "type_inferred",
        }
        data = {"start": "main", "end": "invoke", "chains": [{"chain": [start, middle, end]}]}
        lines = summarize_envelope("find_function_call_chain", derived(data)).splitlines()
        self.assertIn("? marks an ambiguous call", lines[0])
        self.assertEqual(lines[1], "main -> invoke? -> invoke")
        self.assertEqual(lines[3], "  click/core.py:1400 invoke called at line 1560 (ambiguous)")

    def test_an_empty_chain_gives_the_reason_instead_of_the_depth(self):
        data = {
            "start": "Nope.run",
            "end": "b",
            "chains": [],
            "max_depth": 5,
            "reason": 'no definition is named "Nope.run" (start) in repository "r"',
        }
        self.assertEqual(
            summarize_envelope("find_function_call_chain", derived(data)),
            "derived/fresh — No call chain found from Nope.run to b: no definition is named"
            ' "Nope.run" (start) in repository "r"',
        )

    def test_compact_outgoing_rows_without_the_anchors_path_still_read(self):
        # The compact view drops the anchor side's path: the call site keeps its line.
        row = {"direction": "outgoing", "type": "CALLS", "line_number": 532}
        row.update(source_id="content-entity:e_g", source_name="gatherResults")
        row.update(target_name="_runCallbacks", target_file_path="twisted/internet/defer.py")
        row["target_start_line"] = 997
        data = relationship_story([row], direction="outgoing")
        self.assertEqual(
            summarize_envelope("analyze_code_relationships", derived(data)).splitlines()[1],
            "line 532: gatherResults -> _runCallbacks (twisted/internet/defer.py:997)",
        )

    def test_relationships_cut_to_the_budget_leave_the_hint_to_the_dispatch_note(self):
        data = relationship_story(
            [edge("a", "gatherResults", "x.py", 1)], available=9, truncated=True
        )
        data["truncation_note"] = "Only the first 1 of 25 relationships fit the response budget."
        text = summarize_envelope("analyze_code_relationships", derived(data))
        self.assertEqual(text.splitlines()[0], "derived/fresh — 1 of 9 callers of gatherResults")

    def test_a_shared_name_lists_its_definition_groups_with_their_ids(self):
        rows = [edge("test_one", "write", "t/test_a.py", 12)]
        data = relationship_story(rows, available=40, truncated=True)
        data["target_resolution"] = {"name": "write", "status": "ambiguous"}
        data["definition_groups"] = [
            {
                "entity_id": f"e{n}",
                "name": "write",
                "class_context": owner,
                "file_path": path,
                "start_line": line,
                "edge_count": count,
            }
            for n, (owner, path, line, count) in enumerate(
                [("FileWrapper", "t/protocol.py", 500, 30), ("Request", "t/http.py", 90, 10)]
            )
        ]
        lines = summarize_envelope("analyze_code_relationships", derived(data)).splitlines()
        self.assertIn('"write" names 2 definitions', lines[1])
        self.assertEqual(
            lines[2], "t/protocol.py:500 FileWrapper.write 30 caller edges entity_id=e0"
        )
        self.assertEqual(lines[3], "t/http.py:90 Request.write 10 caller edges entity_id=e1")
        self.assertEqual(lines[4], "t/test_a.py:12 test_one -> write")


class PagingHintTests(SynchronousTestCase):
    def test_a_transitive_answer_asks_for_a_wider_limit_not_an_offset_it_refuses(self):
        rows = [edge("rule_0", "settle", "ledger/rules.py", 3)]
        data = relationship_story(rows, available=20, truncated=True)
        data["summary"] = {"truncated": True, "next_offset": None}  # one page: no offset
        data["target_resolution"]["name"] = "settle"
        headline = summarize_envelope("analyze_code_relationships", derived(data)).splitlines()[0]
        self.assertEqual(
            headline,
            "derived/fresh — 1 of 20 callers of settle; truncated: raise limit for the rest",
        )

    def test_one_of_one_reads_singular_past_the_last_row(self):
        data = relationship_story([], available=1)
        data["scope"]["offset"] = 1
        headline = summarize_envelope("analyze_code_relationships", derived(data)).splitlines()[0]
        self.assertTrue(headline.startswith("derived/fresh — 0 of 1 caller "), headline)


class SaturatedCountTests(SynchronousTestCase):
    """Edge counts stop at 10,001 per direction: the headline says 'more than', never N of M<N."""

    def test_a_saturated_callers_count_reads_as_a_floor_with_its_tests_share(self):
        rows = [edge("test_one", "assertEqual", "t/test_a.py", 3)]
        data = relationship_story(rows, available=10001, truncated=True)
        data["coverage"]["incoming_from_tests"] = 10201
        headline = summarize_envelope("analyze_code_relationships", derived(data)).splitlines()[0]
        self.assertIn("1 of more than 10000 callers", headline)
        self.assertIn("at least 10001 from tests", headline)
        self.assertNotIn("10201", headline)

    def test_an_unsaturated_count_is_exact(self):
        rows = [edge("test_one", "helper", "t/test_a.py", 3)]
        data = relationship_story(rows, available=40, truncated=True)
        data["coverage"]["incoming_from_tests"] = 12
        headline = summarize_envelope("analyze_code_relationships", derived(data)).splitlines()[0]
        self.assertIn("1 of 40 callers", headline)
        self.assertIn("(12 of 40 from tests, listed last)", headline)
