"""Tests for the argument helpers: the coercions of the reference server's dispatch."""

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.dispatch import args as a


class StringAndNumberTests(SynchronousTestCase):
    def test_string_arg_turns_every_non_string_into_empty(self) -> None:
        for value in (None, 3, 2.5, True, [], {}):
            self.assertEqual(a.string_arg({"k": value}, "k"), "")
        self.assertEqual(a.string_arg({"k": " x "}, "k"), " x ")
        self.assertEqual(a.string_arg({}, "k"), "")

    def test_int_or_truncates_toward_zero(self) -> None:
        self.assertEqual(a.int_or({"n": 2.9}, "n", 5), 2)
        self.assertEqual(a.int_or({"n": -2.9}, "n", 5), -2)
        self.assertEqual(a.int_or({"n": 7}, "n", 5), 7)

    def test_int_or_rejects_numeric_strings_bools_and_non_finite_numbers(self) -> None:
        for value in ("10", True, False, None, [], float("nan"), float("inf")):
            self.assertEqual(a.int_or({"n": value}, "n", 5), 5)

    def test_int_string_renders_the_truncated_value(self) -> None:
        self.assertEqual(a.int_string({"n": 3.99}, "n", 50), "3")
        self.assertEqual(a.int_string({}, "n", 50), "50")

    def test_optional_int_string_is_empty_only_when_the_key_is_absent(self) -> None:
        self.assertEqual(a.optional_int_string({}, "n"), "")
        self.assertEqual(a.optional_int_string({"n": 4.5}, "n"), "4")
        self.assertEqual(a.optional_int_string({"n": "x"}, "n"), "0")

    def test_optional_float_is_present_for_numbers_only(self) -> None:
        self.assertEqual(a.optional_float({"c": 0.5}, "c"), (0.5, True))
        self.assertEqual(a.optional_float({"c": 1}, "c"), (1, True))
        self.assertFalse(a.optional_float({"c": "0.5"}, "c")[1])
        self.assertFalse(a.optional_float({"c": True}, "c")[1])
        self.assertFalse(a.optional_float({}, "c")[1])


class BoolTests(SynchronousTestCase):
    def test_bool_or_keeps_only_json_bools(self) -> None:
        self.assertIs(a.bool_or({"b": False}, "b", True), False)
        self.assertIs(a.bool_or({"b": "false"}, "b", True), True)
        self.assertIs(a.bool_or({"b": 0}, "b", True), True)

    def test_bool_str_is_empty_unless_a_bool_is_supplied(self) -> None:
        self.assertEqual(a.bool_str({"b": True}, "b"), "true")
        self.assertEqual(a.bool_str({"b": False}, "b"), "false")
        self.assertEqual(a.bool_str({"b": "true"}, "b"), "")


class ListAndObjectTests(SynchronousTestCase):
    def test_string_slice_returns_lists_unchecked_and_null_otherwise(self) -> None:
        self.assertEqual(a.string_slice({"l": ["a", 1, None]}, "l"), ["a", 1, None])
        self.assertIsNone(a.string_slice({"l": "a"}, "l"))
        self.assertIsNone(a.string_slice({}, "l"))

    def test_string_values_keeps_non_empty_strings_and_is_never_null(self) -> None:
        self.assertEqual(a.string_values({"l": ["a", "", 3, "b"]}, "l"), ["a", "b"])
        self.assertEqual(a.string_values({"l": "a"}, "l"), [])

    def test_object_slice_keeps_objects(self) -> None:
        self.assertEqual(a.object_slice({"l": [{"p": 1}, "x", 2]}, "l"), [{"p": 1}])
        self.assertIsNone(a.object_slice({"l": {"p": 1}}, "l"))

    def test_map_string_any_gives_empty_object_for_non_objects(self) -> None:
        self.assertEqual(a.map_string_any({"m": {"k": "v"}}, "m"), {"k": "v"})
        self.assertEqual(a.map_string_any({"m": ["k"]}, "m"), {})

    def test_first_string_reads_only_a_leading_string(self) -> None:
        self.assertEqual(a.first_string(["a", "b"]), "a")
        self.assertEqual(a.first_string([1, "b"]), "")
        self.assertEqual(a.first_string(None), "")

    def test_first_non_empty_takes_arguments_in_priority_order(self) -> None:
        args = {"repo": " ", "repository_id": " r1 ", "repo_id": "r2"}
        self.assertEqual(a.first_non_empty(args, ["repo", "repository_id"], trimmed=True), "r1")
        self.assertEqual(a.first_non_empty(args, ["repo", "repo_id"]), " ")


class IdentifierTests(SynchronousTestCase):
    def test_normalize_qualified_identifier_drops_the_first_qualifier(self) -> None:
        self.assertEqual(a.normalize_qualified_identifier("workload:payments"), "payments")
        self.assertEqual(a.normalize_qualified_identifier("a:b:c"), "b:c")
        for unchanged in ("payments", ":x", "x:", ""):
            self.assertEqual(a.normalize_qualified_identifier(unchanged), unchanged)

    def test_canonical_workload_identifier_needs_text_after_the_prefix(self) -> None:
        self.assertEqual(a.canonical_workload_identifier("workload:pay"), "workload:pay")
        self.assertEqual(a.canonical_workload_identifier("workload:"), "")
        self.assertEqual(a.canonical_workload_identifier("service:pay"), "")

    def test_escape_path_segment_matches_go_path_escape(self) -> None:
        self.assertEqual(a.escape_path_segment("org/repo name"), "org%2Frepo%20name")
        self.assertEqual(a.escape_path_segment("finding:docs:1"), "finding:docs:1")
        self.assertEqual(a.escape_path_segment("a;b,c?d%"), "a%3Bb%2Cc%3Fd%25")
        self.assertEqual(a.escape_path_segment("$&+=@-_.~"), "$&+=@-_.~")
        self.assertEqual(a.escape_path_segment("é"), "%C3%A9")


class DerivedValueTests(SynchronousTestCase):
    def test_parse_max_depth_prefers_a_number_then_context_then_default(self) -> None:
        self.assertEqual(a.parse_max_depth({"max_depth": 3.5, "context": "7"}), 3)
        self.assertEqual(a.parse_max_depth({"max_depth": "3", "context": " 7 "}), 7)
        self.assertEqual(a.parse_max_depth({"context": "deep"}), 5)

    def test_cross_repo_requested_by_flag_scope_or_force(self) -> None:
        self.assertTrue(a.cross_repo_requested({"cross_repo": True}))
        self.assertTrue(a.cross_repo_requested({"scope": "Cross_Repo"}))
        self.assertTrue(a.cross_repo_requested({"cross_repo": False}, forced=True))
        self.assertFalse(a.cross_repo_requested({"cross_repo": "true", "scope": "auto"}))

    def test_split_call_chain_target_splits_at_the_first_arrow(self) -> None:
        self.assertEqual(a.split_call_chain_target(" a -> b "), ("a", "b"))
        self.assertEqual(a.split_call_chain_target("a->b->c"), ("a", "b->c"))
        self.assertIsNone(a.split_call_chain_target("a-b"))

    def test_content_search_scope_collapses_by_element_count(self) -> None:
        self.assertEqual(a.content_search_scope({"repo_id": "r"}), ("r", None))
        self.assertEqual(a.content_search_scope({"repo_ids": [], "repo_id": ""}), (None, None))
        self.assertEqual(a.content_search_scope({"repo_ids": ["x"], "repo_id": "r"}), ("x", None))
        self.assertEqual(a.content_search_scope({"repo_ids": [5]}), (None, None))
        self.assertEqual(a.content_search_scope({"repo_ids": ["x", 5]}), (None, ["x", 5]))

    def test_go_json_value_writes_integral_floats_as_integers(self) -> None:
        value = a.go_json_value({"a": [1.0, 0.5, {"b": -3.0}], "c": 1e21, "d": True})
        self.assertEqual(value, {"a": [1, 0.5, {"b": -3}], "c": 1e21, "d": True})
        self.assertIs(type(value["a"][0]), int)
        self.assertIs(type(value["c"]), float)

    def test_case_sensitive_text_search_is_sent_only_when_given(self) -> None:
        from eshu_mcp.dispatch import resolve_route

        for tool in ("search_file_content", "search_entity_content"):
            plain = resolve_route(tool, {"pattern": "Load"}).body
            self.assertNotIn("case_sensitive", plain)
            exact = resolve_route(tool, {"pattern": "Load", "case_sensitive": True}).body
            self.assertIs(exact["case_sensitive"], True)
            self.assertNotIn("regex", plain)
            self.assertIs(
                resolve_route(tool, {"pattern": "L.ad", "regex": True}).body["regex"], True
            )
