"""The readable tables of scripts/bench_callgraph.py."""

from __future__ import annotations

# The per-tier edge counts of the runtime table, summed in its totals rows: edges and how
# they were judged, then why an edge was not checked (or was right only through a wrapper).
CHECKED_COUNTS = ("edges", "checked", "correct", "wrong", "wrong_override", "wrong_outside")
UNCHECKED_COUNTS = ("not_run", "name_not_seen", "generator_target", "correct_only_via_wrapper")


def _fmt(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


def _table(title: str, rows: list[dict], columns: list[str]) -> None:
    print(f"\n{title}")
    cells = [[_fmt(row.get(c)) for c in columns] for row in rows]
    widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]
    print(
        "  ".join(
            c.rjust(w) if i else c.ljust(w)
            for i, (c, w) in enumerate(zip(columns, widths, strict=True))
        )
    )
    for r in cells:
        print(
            "  ".join(
                v.rjust(w) if i else v.ljust(w)
                for i, (v, w) in enumerate(zip(r, widths, strict=True))
            )
        )


def _total(label: str, tiers: list[dict]) -> dict:
    total: dict = {"tier": label}
    for key in (*CHECKED_COUNTS, *UNCHECKED_COUNTS):
        total[key] = sum(t[key] for t in tiers)
    total["precision"] = round(total["correct"] / total["checked"], 3) if total["checked"] else None
    return total


def print_report(result: dict) -> None:
    print(f"eshu_mcp measured: {result['eshu_mcp']}  ({result['files']} python files)")
    if "index_seconds" in result:
        print(f"index built in {result['index_seconds']} s")
    callers = result["callers"]
    _table(
        "Callers against ast (sites: call expressions; callers: enclosing defs)",
        callers["names"],
        [
            "name",
            "kind",
            "definitions",
            "ast_sites",
            "site_recall",
            "caller_recall",
            "edges",
            "edge_precision",
            "ambiguous_edges",
            "runtime_sites",
            "runtime_recall_exact",
            "runtime_checked_edges",
            "runtime_precision",
        ],
    )
    print("overall:", "  ".join(f"{k} {_fmt(v)}" for k, v in callers["overall"].items()))
    runtime = result.get("runtime")
    if runtime:
        print(
            f"\nRuntime: {runtime['modules']} test modules, {runtime['call_sites_seen']} call"
            f" sites seen{' (time limit hit)' if runtime['timed_out'] else ''}"
        )
        tiers = [{"tier": k, **v} for k, v in runtime["tiers"].items() if "/" not in k]
        totals = []
        for label, chosen in (
            ("ALL single-target", [t for t in tiers if "ambiguous" not in t["tier"]]),
            ("ALL", tiers),
        ):
            totals.append(_total(label, chosen))
        _table(
            "CALLS edges checked at runtime, per resolution method",
            [*tiers, *totals],
            [
                "tier",
                *CHECKED_COUNTS,
                "precision",
                "stored_confidence",
                "confidence_gap",
                *UNCHECKED_COUNTS,
            ],
        )
        for tier, lines in runtime.get("wrong_examples", {}).items():
            for line in lines:
                print(f"  wrong {tier}: {line}")
        kinds = [{"tier": k, **v} for k, v in runtime["tiers"].items() if "/" in k]
        _table(
            "... per method and call kind",
            kinds,
            ["tier", "edges", "checked", "correct", "precision", "stored_confidence"],
        )
        if runtime["ambiguous"]:
            _table(
                "Ambiguous edges (one group per call site): does the candidate set hold what ran?",
                [{"method": k, **v} for k, v in runtime["ambiguous"].items()],
                [
                    "method",
                    "sites",
                    "mean_candidates",
                    "checked",
                    "contains_what_ran",
                    "misses_ran_outside_repo",
                    "share_containing",
                    "stored_confidence",
                ],
            )
    _table(
        "Direct subclasses: ast (through imports) against INHERITS edges",
        result["hierarchy"],
        ["class", "ast_children", "index_children", "found", "recall", "precision"],
    )
    api = result.get("api")
    if api:
        _table(
            "Through the tools (in process, /api/v0)",
            api["callers"],
            [
                "name",
                "story_rows",
                "story_duplicate_rows",
                "story_missing_rows",
                "story_caller_recall",
                "story_caller_precision",
                "find_callers_status",
                "find_callers_rows",
                "find_callers_duplicate_rows",
                "find_callers_paging_stalled",
                "find_callers_callers",
                "find_callers_recall",
            ],
        )
        for row in api["hierarchy"]:
            print(f"class_hierarchy {row['class']}: by name {row['by_name']}, by id {row['by_id']}")
        dead = api["dead_code"]
        print(
            f"\nfind_dead_code: {dead['reported']} reported (over {dead.get('pages', 1)} pages;"
            f" {dead.get('classifications')})"
            f" from {dead['files_with_results']} of"
            f" {dead['repository_files']} files; referenced nowhere else:"
            f" {dead['referenced_nowhere']} ({_fmt(dead['share_referenced_nowhere'])}); scan"
            f" {dead['scan']}"
            + (
                f"; ran in the runtime trace (certainly not dead): {dead['ran_at_runtime']}"
                f" {dead['ran_examples']}"
                if dead.get("ran_at_runtime") is not None
                else ""
            )
        )
    print("\nIssue 9 'Done when' figures:")
    for key, value in result.get("done_when", {}).items():
        print(f"  {key}: {_fmt(value)}")
