"""Refused arguments read as one sentence naming the argument, the value and what is allowed."""

from eshu_mcp.dispatch.argument_errors import argument_error_result, argument_error_text
from eshu_mcp.dispatch.validation import check_arguments


def text_for(tool: str, args: dict) -> str:
    _, problems = check_arguments(tool, args)
    return argument_error_text(tool, problems)


def test_wrong_type_names_the_value_and_the_type():
    assert text_for("find_code", {"query": 123}) == (
        "query must be a string, but the number 123 was given."
    )


def test_quoted_number_says_how_to_write_it():
    args = {"repo_id": "r", "relative_path": "a.py", "start_line": "1", "end_line": 3}
    assert text_for("get_file_lines", args) == (
        'start_line must be an integer, but the string "1" was given (write 1 without quotes).'
    )


def test_out_of_range_states_both_bounds():
    assert text_for("find_code", {"query": "x", "limit": -5}) == (
        "limit must be between 1 and 200, but -5 was given."
    )


def test_misspelled_enum_value_lists_the_values_and_the_nearest():
    text = text_for("inspect_code_inventory", {"inventory_kind": "dataclasses"})
    assert text == (
        "inventory_kind must be one of entity, top_level, dataclass, documented,"
        " documented_function, decorated, class_with_method, super_call, function_count_by_file,"
        ' but the string "dataclasses" was given (did you mean dataclass?).'
    )


def test_unknown_argument_suggests_the_near_name_and_lists_the_arguments():
    assert text_for("get_changed_since", {"repo_id": "r"}) == (
        "repo_id is not an argument of get_changed_since (did you mean repository?), which takes"
        " repository, sample_limit, scope_id, since_generation_id, since_observed_at."
    )


def test_missing_required_argument_says_what_it_takes():
    assert text_for("find_code", {}) == "query is required (a string) but was not given."
    assert (
        text_for("find_code", {"query": None}) == "query is required (a string) but null was given."
    )


def test_oversized_string_is_measured_not_echoed():
    text = text_for("search_file_content", {"pattern": "ab" * 500_000})
    assert text == ("pattern is 1000000 characters long, but at most 4096 characters are allowed.")


def test_oversized_list_states_the_bound():
    text = text_for("investigate_change_surface", {"changed_paths": ["a.py"] * 600})
    assert text == "changed_paths has 600 items, but at most 500 items are allowed."


def test_long_values_are_shortened_in_the_text():
    text = text_for("find_code", {"query": "x", "language": ["py"] * 3, "limit": "a" * 100})
    assert "an array of 3 items" in text
    assert 'a string of 100 characters starting "' + "a" * 40 + '"' in text


def test_several_problems_make_one_sentence_listing_the_names_once():
    args = {"query": 5, "limit": 0, "lang": "py", "scoep": 1}
    assert text_for("find_code", args) == (
        "find_code was called with 4 argument problems: lang is not an argument of find_code"
        " (did you mean language?), which takes edit_distance, exact, language, limit, query,"
        " repo_id, scope; scoep is not an argument of find_code (did you mean scope?);"
        " limit must be between 1 and 200, but 0 was given; query must be a string, but the"
        " number 5 was given."
    )


def test_more_than_five_problems_are_counted():
    args = {f"extra_{n}": n for n in range(7)}
    text = text_for("find_code", {**args, "query": "x"})
    assert text.endswith("; and 2 more problems.")
    assert text.count(".") == 1


def test_result_is_an_error_with_an_invalid_argument_envelope():
    _, problems = check_arguments("find_code", {"query": "x", "limt": 5})
    result = argument_error_result("find_code", problems)
    assert result["isError"] is True
    assert result["content"] == [
        {"type": "text", "text": argument_error_text("find_code", problems)}
    ]
    error = result["structuredContent"]["error"]
    assert error["code"] == "invalid_argument"
    assert error["details"]["problems"] == [
        {
            "argument": "limt",
            "problem": "unknown",
            "text": "limt is not an argument of find_code (did you mean limit?), which takes"
            " edit_distance, exact, language, limit, query, repo_id, scope",
            "suggestion": "limit",
        }
    ]


def test_a_flood_of_unknown_names_gives_a_bounded_answer():
    args = {f"extra_{n}": n for n in range(2000)}
    args["a" * 100_000] = 1
    _, problems = check_arguments("find_code", {**args, "query": "x"})
    result = argument_error_result("find_code", problems)
    assert len(result["content"][0]["text"]) < 1000
    details = result["structuredContent"]["error"]["details"]
    assert (details["problem_count"], len(details["problems"])) == (2001, 50)
    assert details["problems"][0]["argument"] == "a" * 64 + "..."


def test_an_argument_the_route_ignores_is_not_an_argument_problem():
    assert check_arguments("find_code", {"query": "x", "edit_distance": 1})[1] == []
