"""
The first page a compact answer asks for when the call names no ``limit``.

Eshu's default page sizes (25 relationship rows, 25 symbol definitions, 100 dead-code
candidates) suit an HTTP caller that reads every row; an assistant usually reads the top
few and asks for more when it needs them. So, with compact answers, a call that gives no
``limit`` to a tool that pages by ``offset`` and whose default page is longer than
``answer_rows`` asks for ``answer_rows`` rows instead (not the plan and impact tools,
whose verdict weighs every row). Nothing is dropped: the answer carries the route's own
``truncated`` flag and next offset, and its text says that this was a first page and how
to get the rest. A call that names ``limit`` gets exactly that, and ``--answer-rows 0``
(or full detail) keeps Eshu's defaults.
"""

from functools import cache

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
    ``rows`` rows and how to ask for more, when the answer says it has more. An answer
    the answer page cut already says so; its note then only gives the next offset (a
    longer page would be cut the same way).
    """
    structured = result.get("structuredContent")
    data = structured.get("data") if isinstance(structured, dict) else None
    if result.get("isError") or not isinstance(data, dict) or not _has_more(data):
        return result
    if isinstance(data.get("truncation_note"), str):
        following = _next_offset(data)
        if following is None:
            return result
        note = f"(a compact first page of {rows} rows; the next page starts at offset={following})"
    else:
        default, maximum = _paged_tools()[tool_name]
        longest = f", up to {maximum}," if isinstance(maximum, int) else ""
        note = (
            f"(a compact first page of {rows} rows; this tool's default is {default}: "
            f"pass limit{longest} for longer pages)"
        )
    content = list(result.get("content", ()))
    for index, block in enumerate(content):
        if block.get("type") == "text":
            text = block.get("text", "")
            content[index] = {**block, "text": f"{text}\n{note}" if text else note}
            break
    return {**result, "content": content}


def _blocks(data: dict) -> list[dict]:
    """The answer and its ``summary`` and ``coverage`` blocks, where paging is stated."""
    return [data] + [
        data[key] for key in ("summary", "coverage") if isinstance(data.get(key), dict)
    ]


def _next_offset(data: dict) -> int | None:
    for block in _blocks(data):
        following = block.get("next_offset")
        if isinstance(following, int) and not isinstance(following, bool) and following > 0:
            return following
    return None


def _has_more(data: dict) -> bool:
    """Whether an answer says rows exist past the ones it holds."""
    if _next_offset(data) is not None:
        return True
    return any(
        block.get("truncated") is True or block.get("display_truncated") is True
        for block in _blocks(data)
    )
