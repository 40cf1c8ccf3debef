"""Checking tool arguments against each tool's input schema, for every tool of the catalog."""

import json
from importlib import resources

import pytest
from jsonschema import Draft202012Validator

from eshu_mcp.catalog.contract import load_contract
from eshu_mcp.dispatch.validation import (
    MAX_LIST_ITEMS,
    MAX_OBJECT_BYTES,
    MAX_STRING_CHARS,
    ArgumentProblem,
    check_arguments,
    tool_arguments,
)

TOOLS = load_contract()
TOOL_NAMES = [record["name"] for record in TOOLS]


def problems_of(tool: str, args: dict) -> list[ArgumentProblem]:
    return check_arguments(tool, args)[1]


def sample(schema: dict):
    """A value the schema documents: its default, first enum value, or a value of its type."""
    if "default" in schema:
        return schema["default"]
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "integer":
        return schema.get("minimum", 1)
    if kind == "number":
        return schema.get("minimum", 0.5)
    if kind == "boolean":
        return True
    if kind == "array":
        return [sample(schema.get("items", {"type": "string"}))]
    if kind == "object":
        return {}
    return "sample-value"


def documented_arguments(record: dict) -> dict:
    """Every argument with a default at that default, plus the required ones."""
    properties = record["input_schema"]["properties"]
    args = {name: schema["default"] for name, schema in properties.items() if "default" in schema}
    for name in record["input_schema"].get("required", ()):
        args[name] = sample(properties[name])
    return args


# The whole catalog ------------------------------------------------------------


@pytest.mark.parametrize("record", TOOLS, ids=TOOL_NAMES)
def test_every_tool_schema_compiles_and_its_documented_arguments_pass(record):
    Draft202012Validator.check_schema(record["input_schema"])
    assert tool_arguments(record["name"]) is not None
    assert problems_of(record["name"], documented_arguments(record)) == []


@pytest.mark.parametrize("record", TOOLS, ids=TOOL_NAMES)
def test_every_advertised_value_of_every_argument_passes(record):
    base = {
        name: sample(record["input_schema"]["properties"][name])
        for name in record["input_schema"].get("required", ())
    }
    for name, schema in record["input_schema"]["properties"].items():
        for value in schema.get("enum", [sample(schema)]):
            # an argument the route ignores too: the answer says so, it is never refused
            assert problems_of(record["name"], {**base, name: value}) == [], (name, value)


def test_the_catalog_holds_162_tools_each_compiled_once():
    assert len(TOOL_NAMES) == 162
    assert all(tool_arguments(name) is tool_arguments(name) for name in TOOL_NAMES)


def _catalog(name: str) -> dict:
    folder = resources.files("eshu_mcp.query.local").joinpath("catalogs")
    return json.loads(folder.joinpath(name).read_text("utf-8"))


def _playbook_calls():
    for playbook in _catalog("query_playbooks.json")["playbooks"]:
        for step in playbook["steps"]:
            args = {}
            for param in step["params"]:
                constants = [param[key] for key in param if key.startswith("const_")]
                args[param["name"]] = constants[0] if constants else "from-input"
            yield f"{playbook['id']}/{step['id']}", step["tool"], args


def _workflow_calls():
    for workflow in _catalog("investigation_workflows.json")["workflows"]:
        for route in workflow["missing_evidence_routes"]:
            for call in route["calls"]:
                args = {
                    name: "bound-input" if isinstance(value, str) and "{" in value else value
                    for name, value in call.get("params", {}).items()
                }
                yield f"{workflow['id']}/{call['id']}", call["tool"], args


@pytest.mark.parametrize("where, tool, args", [*_playbook_calls(), *_workflow_calls()])
def test_calls_the_playbooks_and_workflows_suggest_pass(where, tool, args):
    assert tool_arguments(tool) is not None, where
    assert problems_of(tool, args) == [], where


# One call -----------------------------------------------------------------------


def test_wrong_types_are_refused_with_the_type_wanted():
    (problem,) = problems_of("find_code", {"query": 123})
    assert problem == ArgumentProblem("query", "type", 123, "string")
    (problem,) = problems_of("find_code", {"query": "x", "limit": "ten"})
    assert (problem.argument, problem.kind, problem.suggestion) == ("limit", "type", None)


def test_a_quoted_number_suggests_the_number():
    args = {"repo_id": "r", "relative_path": "a.py", "start_line": "1", "end_line": 3}
    (problem,) = problems_of("get_file_lines", args)
    assert (problem.argument, problem.kind, problem.suggestion) == ("start_line", "type", "1")


def test_values_outside_the_range_are_refused_with_both_bounds():
    (problem,) = problems_of("find_code", {"query": "x", "limit": -5})
    assert problem == ArgumentProblem("limit", "range", -5, (1, 200))


def test_a_misspelled_enum_value_lists_the_values_and_the_nearest():
    args = {"query_type": "find_caller", "target": "x"}
    (problem,) = problems_of("analyze_code_relationships", args)
    assert problem.kind == "enum"
    assert "find_callers" in problem.allowed
    assert problem.suggestion == "find_callers"


def test_an_unknown_name_names_the_argument_meant():
    (problem,) = problems_of("get_changed_since", {"repo_id": "r", "scope_id": "s"})
    assert (problem.argument, problem.kind, problem.suggestion) == (
        "repo_id",
        "unknown",
        "repository",
    )
    assert "repository" in problem.allowed
    (problem,) = problems_of("find_code", {"query": "x", "limt": 5})
    assert problem.suggestion == "limit"


def test_an_unknown_name_with_no_near_miss_suggests_nothing():
    (problem,) = problems_of("find_code", {"query": "x", "zzzz": 1})
    assert (problem.kind, problem.suggestion) == ("unknown", None)


def test_a_missing_required_argument_is_refused():
    assert problems_of("find_code", {}) == [
        ArgumentProblem("query", "required", None, {"type": "string", "maxLength": 4096})
    ]


def test_a_route_alternative_satisfies_a_required_argument():
    assert problems_of("search_file_content", {"query": "needle"}) == []
    assert problems_of("get_incident_context", {"incident_id": "inc-1"}) == []


def test_hidden_route_arguments_are_known_but_typed():
    assert problems_of("get_code_relationship_story", {"target": "x", "cross_repo": True}) == []
    (problem,) = problems_of("get_code_relationship_story", {"target": "x", "cross_repo": "yes"})
    assert (problem.argument, problem.kind) == ("cross_repo", "type")


def test_null_means_not_given():
    args, problems = check_arguments("find_code", {"query": "x", "limit": None})
    assert (args, problems) == ({"query": "x"}, [])
    (problem,) = problems_of("find_code", {"query": None})
    assert (problem.argument, problem.kind) == ("query", "null")


def test_oversized_strings_lists_and_objects_are_refused_with_the_bound():
    (problem,) = problems_of("search_file_content", {"pattern": "a" * 1_000_000})
    assert (problem.argument, problem.kind, problem.allowed) == (
        "pattern",
        "too_long",
        MAX_STRING_CHARS,
    )
    paths = ["a.py"] * (MAX_LIST_ITEMS + 1)
    (problem,) = problems_of("investigate_change_surface", {"changed_paths": paths})
    assert (problem.argument, problem.kind, problem.allowed) == (
        "changed_paths",
        "too_many",
        MAX_LIST_ITEMS,
    )
    big = {"rows": ["y" * 1000] * (MAX_OBJECT_BYTES // 1000)}
    args = {"view": "service_story", "source_response": big}
    (problem,) = problems_of("derive_visualization_packet", args)
    assert (problem.argument, problem.kind, problem.allowed) == (
        "source_response",
        "too_large",
        MAX_OBJECT_BYTES,
    )


def test_strings_inside_lists_are_bounded_too():
    (problem,) = problems_of("search_file_content", {"pattern": "x", "repo_ids": ["r" * 5000]})
    assert (problem.argument, problem.kind) == ("repo_ids[0]", "too_long")


def test_a_bound_the_contract_states_is_kept():
    handles = [{"kind": "file", "relative_path": "a.py"}] * 501
    (problem,) = problems_of("build_evidence_citation_packet", {"handles": handles})
    assert (problem.kind, problem.allowed) == ("too_many", 500)


def test_several_problems_come_in_a_fixed_order_one_per_argument():
    args = {"query": 5, "limit": 0, "lang": "py", "exact": "true", "ecosystem": ""}
    problems = problems_of("find_code", args)
    assert [(p.argument, p.kind) for p in problems] == [
        ("ecosystem", "unknown"),
        ("lang", "unknown"),
        ("exact", "type"),
        ("limit", "range"),
        ("query", "type"),
    ]
    (problem,) = problems_of("search_registry_bundles", {"query": "x", "ecosystem": ""})
    assert (problem.argument, problem.kind) == ("ecosystem", "too_short")


def test_valid_calls_pass_unchanged_and_unknown_tools_are_left_to_routing():
    args = {"query": "x", "limit": 20, "exact": True}
    assert check_arguments("find_code", args) == (args, [])
    assert check_arguments("no_such_tool", {"a": 1}) == ({"a": 1}, [])


def test_a_lone_surrogate_anywhere_in_an_argument_is_refused_as_not_text():
    for args in (
        {"query": "charge\ud800"},
        {"query": "charge", "language": "\udfff"},
        {"query": "charge", "\ud800": 1},
    ):
        problems = problems_of("find_code", args)
        assert problems, args
        assert all("\ud800" not in str(p) and "\udfff" not in str(p) for p in problems)
    (problem,) = problems_of("find_code", {"query": "charge\ud800"})
    assert (problem.argument, problem.kind) == ("query", "invalid")
    assert "surrogate" in problem.allowed
    problems = problems_of("find_symbol", {"symbol": "x", "repo_id": ["\ud800"]})
    assert ("repo_id", "invalid") in [(p.argument, p.kind) for p in problems]


def test_integers_beyond_64_bits_are_out_of_range_even_where_the_schema_sets_no_bound():
    bounded = [
        (p.argument, p.kind) for p in problems_of("find_code", {"query": "x", "limit": 2**63})
    ]
    assert bounded == [("limit", "range")]
    for tool, schema in ((r["name"], r["input_schema"]) for r in load_contract()):
        for name, spec in (schema.get("properties") or {}).items():
            if spec.get("type") == "integer" and "maximum" not in spec:
                args = {**{n: "x" for n in schema.get("required", [])}, name: 2**63}
                found = [(p.argument, p.kind) for p in problems_of(tool, args)]
                assert (name, "range") in found, (tool, name)
                return
    raise AssertionError("no unbounded integer argument in the catalog")
