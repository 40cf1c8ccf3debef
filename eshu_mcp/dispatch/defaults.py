"""
The repository a call means when it names none.

A server scoped to one repository (``eshu-mcp stdio --repo PATH``, or ``eshu-mcp call``
run inside an indexed repository) answers ``get_repo_summary {}`` or
``get_changed_since {}`` about that repository instead of asking which one: before the
arguments are checked, a tool that takes a repository and was given no selector gets
the server's one repository in its repository argument. The embedded backend resolves
that selector (the ``--repo`` path, possibly a folder inside the repository) to the
repository that holds it.
"""

from collections.abc import Mapping
from functools import cache
from typing import Any

from eshu_mcp.catalog.contract import load_contract

__all__ = ["with_default_repository"]

#: The argument that names "the repository" of a tool, in order of preference.
_REPOSITORY_ARGUMENTS = ("repo_id", "repository", "repository_id", "repo")

#: Arguments that already say which repositories (or other scope) a call is about.
_SELECTORS = frozenset(
    {
        *_REPOSITORY_ARGUMENTS,
        "repo_name",
        "repo_ids",
        "scope_id",
        "source_repository_id",
        "consumer_repo_id",
        "provider_repo_id",
        "entity_id",
        "start_entity_id",
        "end_entity_id",
    }
)

#: Tools whose routes already read the server's repositories when none is named, and
#: whose cross-repository variants a filled-in ``repo_id`` would narrow.
_SCOPED_BY_THE_API = frozenset(
    {
        "analyze_code_relationships",
        "find_function_call_chain",
        "search_file_content",
        "search_entity_content",
        "investigate_contract_impact",
    }
)


#: Tools whose ``repository_id`` names something else (an OCI repository): the code
#: repository is their ``source_repository_id``.
_SOURCE_REPOSITORY = "source_repository_id"


@cache
def _repository_argument() -> dict[str, str]:
    """Each tool's repository argument (tools without one are left out)."""
    found = {}
    for record in load_contract():
        properties = record["input_schema"].get("properties") or {}
        if _SOURCE_REPOSITORY in properties:
            found[record["name"]] = _SOURCE_REPOSITORY
            continue
        for name in _REPOSITORY_ARGUMENTS:
            if properties.get(name, {}).get("type") == "string":
                found[record["name"]] = name
                break
    return found


def _given(value: Any) -> bool:
    if isinstance(value, str):
        return bool(value.strip())
    if isinstance(value, list):
        return any(_given(item) for item in value)
    return value is not None


def with_default_repository(tool_name: str, args: Any, repository: str) -> Any:
    """
    ``args`` with ``repository`` as the tool's repository argument when it names none.

    ``repository`` is the server's one repository selector ("" when it serves several
    or the whole index: then nothing changes). Arguments of the wrong type are left to
    the argument checks.
    """
    if not repository or not isinstance(args, Mapping) or tool_name in _SCOPED_BY_THE_API:
        return args
    argument = _repository_argument().get(tool_name)
    if argument is None or any(_given(args.get(name)) for name in _SELECTORS):
        return args
    return {**args, argument: repository}
