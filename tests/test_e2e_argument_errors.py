"""
Argument and API errors as an assistant sees them: the real daemon, the official SDK client.

One ``twistd -n eshu-mcp`` indexes the small sample repository; each test opens a
Streamable HTTP session with the official MCP Python SDK (one test uses ``eshu-mcp
stdio`` instead, as editors launch it), makes one call and
checks the error is one sentence naming the argument, what was given and what is
allowed, and that nothing the call held was silently dropped.
"""

import json
import sys

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from tests.daemon import child_environment, indexed_daemon_args, serving

STDIO = ["-m", "eshu_mcp.cli", "stdio", "--toolsets", "all"]


@pytest.fixture(scope="module")
def daemon(workdir, repository):
    with serving(workdir, indexed_daemon_args(workdir, repository)) as server:
        yield server


def call(daemon, name: str, arguments: dict):
    """One tools/call in a fresh SDK session; the SDK's CallToolResult."""

    async def run():
        async with (
            streamable_http_client(daemon.url + "/mcp") as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return await session.call_tool(name, arguments)

    return anyio.run(run)


def refusal(daemon, name: str, arguments: dict) -> str:
    """The text of a refused call, checked to be one isError sentence with its envelope."""
    result = call(daemon, name, arguments)
    assert result.is_error
    (block,) = result.content
    text = block.text
    assert text.endswith(".") and text.count(". ") == 0, text
    assert result.structured_content["error"]["message"] == text
    return text


def test_a_quoted_integer_is_refused(daemon):
    args = {"repo_id": "sample-repo", "relative_path": "app/main.py", "start_line": "1"}
    args["end_line"] = 3
    assert refusal(daemon, "get_file_lines", args) == (
        'start_line must be an integer, but the string "1" was given (write 1 without quotes).'
    )


def test_a_number_for_a_string_is_refused(daemon):
    assert refusal(daemon, "find_code", {"query": 123}) == (
        "query must be a string, but the number 123 was given."
    )


def test_a_word_for_a_number_is_refused(daemon):
    assert refusal(daemon, "find_code", {"query": "parse", "limit": "ten"}) == (
        'limit must be an integer, but the string "ten" was given.'
    )


def test_a_negative_limit_is_refused_with_the_range(daemon):
    assert refusal(daemon, "find_code", {"query": "parse", "limit": -5}) == (
        "limit must be between 1 and 200, but -5 was given."
    )


def test_a_misspelled_query_type_lists_the_values(daemon):
    text = refusal(
        daemon, "analyze_code_relationships", {"query_type": "find_caller", "target": "main"}
    )
    assert text.startswith("query_type must be one of find_callers, find_callees, ")
    assert text.endswith('but the string "find_caller" was given (did you mean find_callers?).')


def test_repo_id_for_a_tool_that_takes_repository_is_refused(daemon):
    assert refusal(daemon, "get_changed_since", {"repo_id": "sample-repo"}) == (
        "repo_id is not an argument of get_changed_since (did you mean repository?), which"
        " takes repository, sample_limit, scope_id, since_generation_id, since_observed_at."
    )


def test_a_misspelled_argument_name_is_refused(daemon):
    assert refusal(daemon, "find_code", {"query": "parse", "limt": 5}) == (
        "limt is not an argument of find_code (did you mean limit?), which takes"
        " edit_distance, exact, language, limit, query, repo_id, scope."
    )


def test_a_missing_required_argument_is_refused(daemon):
    assert refusal(daemon, "find_code", {}) == "query is required (a string) but was not given."


def test_a_one_megabyte_pattern_is_refused_with_the_bound(daemon):
    assert refusal(daemon, "search_file_content", {"pattern": "x" * 1_048_576}) == (
        "pattern is 1048576 characters long, but at most 4096 characters are allowed."
    )


def test_an_oversized_list_is_refused_with_the_bound(daemon):
    paths = [f"app/f{n}.py" for n in range(501)]
    assert refusal(daemon, "investigate_change_surface", {"changed_paths": paths}) == (
        "changed_paths has 501 items, but at most 500 items are allowed."
    )


def test_several_problems_are_one_sentence(daemon):
    text = refusal(daemon, "find_code", {"query": 5, "limit": 0})
    assert text == (
        "find_code was called with 2 argument problems: limit must be between 1 and 200,"
        " but 0 was given; query must be a string, but the number 5 was given."
    )


def test_null_for_an_optional_argument_is_not_given(daemon):
    result = call(daemon, "find_code", {"query": "parse_config", "limit": None})
    assert not result.is_error, result.content[0].text
    assert "parse_config" in json.dumps(result.structured_content)


def test_an_api_refusal_reads_as_its_message(daemon):
    result = call(daemon, "inspect_code_inventory", {"inventory_kind": "class_with_method"})
    assert result.is_error
    assert result.content[0].text == "method_name is required for class_with_method inventory."
    error = result.structured_content["error"]
    assert (error["code"], error["details"]["http_status"]) == ("invalid_argument", 400)


def test_an_api_not_found_reads_as_its_message(daemon):
    result = call(daemon, "get_entity_content", {"entity_id": "no-such-entity"})
    assert result.is_error
    assert result.content[0].text == 'entity not found (looked for entity_id "no-such-entity").'
    assert result.structured_content["error"]["code"] == "not_found"


def test_an_argument_the_route_ignores_is_answered_and_named_not_refused(daemon):
    result = call(daemon, "find_dead_code", {"scope": "repo"})
    assert not result.is_error
    assert result.content[0].text.endswith(
        "(scope was accepted but not used by this route: the answer does not depend on it)"
    )


def test_stdio_refuses_the_same_way(workdir, repository):
    params = StdioServerParameters(
        command=sys.executable,
        args=[*STDIO, "--repo", str(repository), "--db", str(workdir / "stdio.sqlite")],
        env=child_environment(workdir),
    )

    async def run():
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return await session.call_tool("find_code", {"query": "parse", "limit": "ten"})

    result = anyio.run(run)
    assert result.is_error
    assert result.content[0].text == 'limit must be an integer, but the string "ten" was given.'
