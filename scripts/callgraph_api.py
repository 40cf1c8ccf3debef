"""
The assistant's view, for scripts/bench_callgraph.py: the same questions asked through the
MCP tools, driven in process through the /api/v0 Resource of the eshu_mcp on sys.path.

* callers per definition through ``get_code_relationship_story`` (incoming CALLS, paged),
  and one-shot ``analyze_code_relationships find_callers`` on the bare name;
* ``analyze_code_relationships class_hierarchy`` for the hierarchy anchors;
* ``find_dead_code`` over the repository, and how much of it is referenced nowhere.
"""

from __future__ import annotations

import attr
from callgraph_ast import references

PAGE = 50  # a page of story rows stays inside the 256 KiB response budget
MAX_PAGES = 200  # the story route's offset stops at 10,000


def _data(result: dict) -> dict:
    content = result.get("structuredContent") or {}
    data = content.get("data", content)
    return data if isinstance(data, dict) else {}


def _incoming_rows(value) -> list[dict]:
    """Every incoming CALLS row anywhere in an answer (shapes differ between versions)."""
    found = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if (
                (item.get("source_id") or item.get("source_file_path"))
                and item.get("line_number")
                and item.get("type", "CALLS") == "CALLS"
                and (item.get("direction", "incoming") == "incoming")
            ):
                found.append(item)
            else:
                stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def _caller_keys(rows: list[dict], index) -> set:
    keys = set()
    for row in rows:
        entity = index.entities.get(row.get("source_id"))
        if entity is not None:
            keys.add(entity.key)
        else:
            keys.add((row.get("source_file_path"), 0))
    return keys


@attr.s(slots=True)
class Paged:
    """Every incoming CALLS row of a paged answer, and how the paging went."""

    rows: list[dict] = attr.ib(factory=list)
    status: str | None = attr.ib(default=None)  # target_resolution.status of the first page
    error: str | None = attr.ib(default=None)  # error code of a failed page
    stalled: bool = attr.ib(default=False)  # a page brought no row not seen before


def _row_key(row: dict) -> tuple:
    """One edge: a compact row grouped under a shared name's definition names it there."""
    target = row.get("target_id") or row.get("definition_entity_id")
    source = row.get("source_id") or row.get("source_file_path")
    return (source, target, row.get("line_number"))


async def _paged(dispatcher, tool: str, args: dict) -> Paged:
    """Page a relationship answer as an assistant would: ``summary.next_offset`` when given,
    else ``offset + limit`` while ``summary.truncated``; bounded by MAX_PAGES."""
    paged = Paged()
    seen: set = set()
    offset = 0
    for _ in range(MAX_PAGES):
        result = await dispatcher.call(tool, {**args, "limit": PAGE, "offset": offset})
        if result.get("isError"):
            paged.error = ((result.get("structuredContent") or {}).get("error") or {}).get(
                "code", "error"
            )
            return paged
        data = _data(result)
        paged.status = paged.status or (data.get("target_resolution") or {}).get("status")
        shared = data.get("relationships_shared") or {}  # fields a compact page states once
        batch = _incoming_rows([{**shared, **row} for row in data.get("relationships", [])])
        paged.rows.extend(batch)
        fresh = {_row_key(r) for r in batch} - seen
        seen |= fresh
        summary = data.get("summary") or {}
        if not batch or (not summary.get("truncated") and len(batch) < PAGE):
            break
        if not fresh:
            paged.stalled = True
            break
        following = summary.get("next_offset")
        offset = following if isinstance(following, int) and following > offset else offset + PAGE
    return paged


async def _callers(dispatcher, index, rows: list[dict]) -> list[dict]:
    out = []
    for row in rows:
        name = row["name"].split(" [")[0]
        story_rows: list[dict] = []
        errors = stalls = 0
        for definition in index.definitions(name):
            story = await _paged(
                dispatcher,
                "get_code_relationship_story",
                {
                    "entity_id": definition.entity_id,
                    "direction": "incoming",
                    "relationship_type": "CALLS",
                },
            )
            for story_row in story.rows:  # a compact row leaves its anchor to the answer
                story_row.setdefault("target_id", definition.entity_id)
            story_rows.extend(story.rows)
            errors += story.error is not None
            stalls += story.stalled
        keys = _caller_keys(story_rows, index)
        unique = {_row_key(r) for r in story_rows}
        shot = await _paged(
            dispatcher, "analyze_code_relationships", {"query_type": "find_callers", "target": name}
        )
        shot_keys = _caller_keys(shot.rows, index)
        shot_unique = {_row_key(r) for r in shot.rows}
        ast_callers, all_callers = row["_callers"], row["_all_callers"]
        out.append(
            {
                "name": row["name"],
                "story_rows": len(story_rows),
                "story_duplicate_rows": len(story_rows) - len(unique),
                "story_missing_rows": row["edges"] - len(unique),
                "story_errors": errors,
                "story_stalled_pagings": stalls,
                "story_caller_recall": _ratio(len(ast_callers & keys), len(ast_callers)),
                "story_caller_precision": _ratio(len(keys & all_callers), len(keys)),
                "find_callers_status": shot.error or shot.status,
                "find_callers_rows": len(shot_unique),
                "find_callers_duplicate_rows": len(shot.rows) - len(shot_unique),
                "find_callers_paging_stalled": shot.stalled,
                "find_callers_callers": len(shot_keys),
                "find_callers_recall": _ratio(len(ast_callers & shot_keys), len(ast_callers)),
                "find_callers_precision": _ratio(len(shot_keys & all_callers), len(shot_keys)),
            }
        )
    return out


def _ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 3) if whole else None


HIERARCHY_PAGES = 40
"""Pages of one class_hierarchy answer read at most."""


async def _hierarchy(dispatcher, index, anchors: list[dict]) -> list[dict]:
    out = []
    for anchor in anchors:
        name = anchor["class"].rsplit(".", 1)[1]
        answers = {}
        for target in (name, anchor["entity_id"]):
            if target is None:
                continue
            children, offset = [], 0
            for _ in range(HIERARCHY_PAGES):  # descendants page, direct subclasses first
                args = {"query_type": "class_hierarchy", "target": target, "offset": offset}
                result = await dispatcher.call("analyze_code_relationships", args)
                block = _data(result).get("class_hierarchy") or {}
                direct = [d for d in block.get("descendants", []) if d.get("depth", 1) == 1]
                children += direct
                offset = block.get("descendants_next_offset")
                if offset is None or not direct:
                    break
            keys = {
                index.entities[d["entity_id"]].key
                for d in children
                if d.get("entity_id") in index.entities
            }
            answers[target] = {
                "error": bool(result.get("isError")),
                "status": (_data(result).get("target_resolution") or {}).get("status"),
                "direct_children": len(children),
                "recall": _ratio(len(keys & anchor["_truth"]), len(anchor["_truth"])),
            }
        out.append(
            {
                "class": anchor["class"],
                "by_name": answers.get(name),
                "by_id": answers.get(anchor["entity_id"]),
            }
        )
    return out


DEAD_CODE_PAGES = 200
"""Pages of find_dead_code read at most (each cut to the answer page by size)."""


def _ran(row: dict, ran: dict) -> bool:
    """Whether a reported row ran in the trace: the function itself, or (a class) any method."""
    start, end = row.get("start_line") or 0, row.get("end_line") or 0
    spans = ran.get(row.get("file_path"), ())
    if "Class" in (row.get("labels") or ()):  # a method ran (the class body runs on import)
        return any(start <= line <= end and name != row.get("name") for line, name in spans)
    return any(start <= line <= end and name == row.get("name") for line, name in spans)


async def _dead_code(dispatcher, index, tree, ran: dict) -> dict:
    """
    Every row find_dead_code reports, paged through by offset as an assistant would; how
    many are referenced nowhere by name, and how many ran in the runtime trace (certainly
    not dead: a lower bound on the wrong ones, since the trace covers only some tests).
    """
    results: list[dict] = []
    offset, limit, pages, error = 0, 100, 0, {}
    for _ in range(DEAD_CODE_PAGES):
        pages += 1
        args = {"repo_id": index.repo_id, "limit": limit, "offset": offset}
        result = await dispatcher.call("find_dead_code", args)
        error = (result.get("structuredContent") or {}).get("error") or {}
        data = _data(result)
        if error or not data:
            break
        results += data.get("results") or []
        if data.get("next_offset") is None:
            break
        offset = data["next_offset"]
    unreferenced = [r for r in results if references(tree, r.get("name", "")) == 0]
    running = [r for r in results if _ran(r, ran)]
    scan = {k: v for k, v in data.items() if "scan" in k or "files" in k or k == "truncated"}
    verdicts: dict[str, int] = {}
    for row in results:
        reasons = row.get("ambiguity_reasons") or [""]
        verdict = row.get("classification", "?")
        if verdict == "ambiguous":
            verdict += f" ({reasons[0].split(':', 1)[0]})"
        verdicts[verdict] = verdicts.get(verdict, 0) + 1
    return {
        "error": error.get("code"),
        "limit": limit,
        "pages": pages,
        "reported": len(results),
        "classifications": dict(sorted(verdicts.items())),
        "unused_ran_at_runtime": (
            sum(1 for r in running if r.get("classification") == "unused") if ran else None
        ),
        "files_with_results": len({r.get("file_path") for r in results}),
        "repository_files": len(tree.module_of),
        "scan": scan,
        "referenced_nowhere": len(unreferenced),
        "share_referenced_nowhere": _ratio(len(unreferenced), len(results)),
        "ran_at_runtime": len(running) if ran else None,
        "ran_examples": sorted(f"{r.get('file_path')}:{r.get('name')}" for r in running)[:8],
        "referenced_examples": sorted(
            f"{r.get('file_path')}:{r.get('name')}" for r in results if r not in unreferenced
        )[:8],
    }


def measure_api(
    db, index, tree, rows: list[dict], anchors: list[dict], log, ran: dict | None = None
) -> dict:
    """Run the tool measures under a reactor; returns their results."""
    from bench_support import in_process, react

    answer: dict = {}

    async def run(reactor):
        async with in_process(reactor, db) as bench:
            log("api: callers ...")
            answer["callers"] = await _callers(bench.dispatcher, index, rows)
            log("api: class hierarchy, dead code ...")
            answer["hierarchy"] = await _hierarchy(bench.dispatcher, index, anchors)
            answer["dead_code"] = await _dead_code(bench.dispatcher, index, tree, ran or {})

    try:
        react(run)
    except SystemExit as stop:
        if stop.code:
            raise
    return answer
