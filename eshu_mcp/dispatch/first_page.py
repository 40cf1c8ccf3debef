"""
The first page a compact answer asks for when the call names no ``limit``.

Eshu's default page sizes (25 relationship rows, 25 symbol definitions, 100 dead-code
candidates) suit an HTTP caller that reads every row; an assistant usually reads the top
few and asks for more when it needs them. So, with compact answers, a call that gives no
``limit`` to a tool that pages by ``offset`` and whose default page is longer than
``answer_rows`` asks for ``answer_rows`` rows instead (not the plan and impact tools,
whose verdict weighs every row). Nothing is dropped: the answer
carries the route's own ``truncated`` flag and next offset, and its text says that this
was a first page and how to get the rest. A call that names ``limit`` gets exactly that,
and ``--answer-rows 0`` (or full detail) keeps Eshu's defaults.
"""

from functools import cache
from typing import Any

from eshu_mcp.catalog.contract import load_contract

__all__ = ["DEFAULT_ANSWER_ROWS", "first_page_arguments", "first_page_note"]

DEFAULT_ANSWER_ROWS = 10
"""Rows a compact answer's first page holds when the call names no ``limit``."""


# Answers that weigh all of their rows into one plan, impact or rollup: a shorter page
# would change the verdict, not only show less of it, so they keep the tool's default.
_WHOLE_ANSWERS = frozenset(
    {
        "analyze_pre_change_impact",
        "compose_replatforming_plan",
        "get_replatforming_rollups",
        "investigate_change_surface",
        "plan_developer_change",
        "propose_terraform_import_plan",
    }
)


@cache
def _paged_tools() -> dict[str, tuple[int, int | None]]:
    """Tools paging by ``offset`` with a default ``limit``: ``(default, maximum)``."""
    paged = {}
    for tool in load_contract():
        if tool["name"] in _WHOLE_ANSWERS:
            continue
        properties = tool.get("input_schema", {}).get("properties", {})
        limit = properties.get("limit")
        if not isinstance(limit, dict) or "offset" not in properties:
            continue
        default = limit.get("default")
        if isinstance(default, int) and not isinstance(default, bool):
            paged[tool["name"]] = (default, limit.get("maximum"))
    return paged


def first_page_arguments(tool_name: str, args: dict, rows: int) -> tuple[dict, int | None]:
    """
    ``(arguments to dispatch, rows asked for)``: ``args`` with ``limit`` set to ``rows``
    when the call gave none and the tool's default page is longer, else ``(args, None)``.
    """
    if rows <= 0 or args.get("limit") is not None:
        return args, None
    paged = _paged_tools().get(tool_name)
    if paged is None or paged[0] <= rows:
        return args, None
    return {**args, "limit": rows}, rows


def first_page_note(tool_name: str, rows: int, result: dict) -> dict:
    """
    ``result`` with a line under its text saying that it holds the compact first page of
    ``rows`` rows and how to ask for a longer page, when the answer says it has more.
    """
    if result.get("isError") or not _has_more(result.get("structuredContent")):
        return result
    default, maximum = _paged_tools()[tool_name]
    longest = f" up to {maximum}" if isinstance(maximum, int) else ""
    note = f"(a compact first page of {rows}; the tool's default is {default}: pass limit{longest})"
    content = list(result.get("content", ()))
    for index, block in enumerate(content):
        if block.get("type") == "text":
            text = block.get("text", "")
            content[index] = {**block, "text": f"{text}\n{note}" if text else note}
            break
    return {**result, "content": content}


def _has_more(structured: Any) -> bool:
    """Whether an answer says rows exist past the ones it holds."""
    data = structured.get("data") if isinstance(structured, dict) else None
    if not isinstance(data, dict):
        return False
    blocks = [data] + [
        data[key] for key in ("summary", "coverage") if isinstance(data.get(key), dict)
    ]
    for block in blocks:
        if block.get("truncated") is True or block.get("display_truncated") is True:
            return True
        next_offset = block.get("next_offset")
        if isinstance(next_offset, int) and not isinstance(next_offset, bool) and next_offset > 0:
            return True
    return False
