"""
The answer-level part of the compact view: blocks of an answer that repeat each other.

:func:`eshu_mcp.query.compact.compact_answer` walks the rows; then these passes run over
the compacted answer as a whole, each taking out something the answer states elsewhere:
a shared name's candidates that ``definition_groups`` lists (and the name each group
repeats), coverage entries the summary
or scope states, edge fields every relationship row shares (stated once as
``relationships_shared``), a dead-code analysis's static policy lists, a topic answer's
per-kind lists that repeat its ranked ``evidence_groups`` (replaced by their counts), and
``answer_metadata`` entries the answer holds at its top level, and a playbook listing's
step details (``resolve_query_playbook`` returns them for the playbook chosen).
"""

from typing import Any

__all__ = ["state_blocks_once"]

# Edge fields stated once when every relationship row has the same value.
_SHARED_EDGE_KEYS = (
    "confidence",
    "resolution_method",
    "call_kind",
    "source_type",
    "target_type",
    "definition_entity_id",
)
_MISSING = object()
# What a compact dead-code analysis block keeps.
_DEAD_CODE_ANALYSIS = (
    "dead_code_language_maturity",
    "dead_code_language_exactness_blockers",
    "notes",
)
# What a compact playbook listing keeps of each playbook (and ``step_tools``).
_PLAYBOOK_KEYS = ("id", "name", "description", "prompt_family", "version", "required_inputs")
PLAYBOOK_NOTE = (
    "resolve_query_playbook(playbook_id, inputs) returns a playbook's steps with their "
    "parameters bound, and its failure modes"
)
# A topic answer's lists of one kind of evidence, each a subset of ``evidence_groups``.
_TOPIC_KIND_LISTS = ("matched_files", "matched_symbols")


def state_blocks_once(out: dict) -> None:
    """Apply every answer-level pass to ``out`` (a compacted answer), in place."""
    _drop_listed_candidates(out)
    _lean_definition_groups(out)
    _drop_metadata_repeats(out)  # before the coverage it repeats is itself trimmed
    _drop_block_repeats(out)
    _trim_dead_code_policy(out)
    _state_shared_edge_fields(out)
    _count_topic_kind_lists(out)
    _list_playbooks_briefly(out)


def _drop_listed_candidates(out: dict) -> None:
    """A shared name's candidates, when ``definition_groups`` lists every one of them."""
    resolution = out.get("target_resolution")
    groups = out.get("definition_groups")
    if not isinstance(resolution, dict) or not isinstance(groups, list):
        return
    candidates = resolution.get("candidates")
    listed = {group.get("entity_id") for group in groups if isinstance(group, dict)}
    if isinstance(candidates, list) and all(
        isinstance(row, dict) and row.get("entity_id") in listed for row in candidates
    ):
        resolution.pop("candidates")
        resolution.setdefault("candidate_count", len(candidates))


def _lean_definition_groups(out: dict) -> None:
    """
    A shared name's definition groups without the name every one of them has (the
    resolution's ``target`` states it) and the ``truncated`` flag that only says the
    group returned fewer rows than its ``edge_count``.
    """
    groups = out.get("definition_groups")
    resolution = out.get("target_resolution")
    if not isinstance(groups, list) or not isinstance(resolution, dict):
        return
    if not all(isinstance(group, dict) for group in groups):
        return
    target = resolution.get("target")
    lean = []
    for group in groups:
        kept = dict(group)
        if kept.get("name") == target:
            del kept["name"]
        returned, edges = kept.get("returned"), kept.get("edge_count")
        counted = isinstance(returned, int) and isinstance(edges, int)
        if counted and kept.get("truncated") == (returned < edges):
            kept.pop("truncated", None)
        lean.append(kept)
    out["definition_groups"] = lean


def _drop_block_repeats(out: dict) -> None:
    """
    Coverage entries that the answer's ``summary``, ``scope`` or top level states with the
    same value (the next offset, the truncation flag, the relationship types, the depth,
    a dead-code scan's counts), or that
    restate them (the sentence explaining a cut by limit, the per-direction flags of a
    one-direction question), and a scope's one-item ``relationship_types`` beside its
    ``relationship_type``.
    """
    coverage, summary, scope = (out.get(key) for key in ("coverage", "summary", "scope"))
    if isinstance(coverage, dict):
        top = {key: value for key, value in out.items() if key != "coverage"}
        stated = [block for block in (summary, scope, top) if isinstance(block, dict)]
        repeated = [
            key
            for key, value in coverage.items()
            if any(key in block and block[key] == value for block in stated)
        ]
        if coverage.get("missing_edge_reason") == "truncated_by_limit":
            # The reason code, the next offset and the truncation flag say it already.
            repeated += ["evidence_explanation", "truncation_state"]
        resolution = out.get("target_resolution")
        if isinstance(resolution, dict) and coverage.get("evidence_explanation") == resolution.get(
            "how_to_narrow"
        ):
            repeated.append("evidence_explanation")  # a shared name's advice, said once
        directions = coverage.get("directions")
        if isinstance(scope, dict) and directions == [scope.get("direction")]:
            # One direction asked: the summary's truncation flag is that direction's.
            repeated += ["directions", "truncated_by_direction"]
        if repeated:
            out["coverage"] = {k: v for k, v in coverage.items() if k not in repeated}
    if isinstance(scope, dict) and scope.get("relationship_types") == [
        scope.get("relationship_type")
    ]:
        out["scope"] = {k: v for k, v in scope.items() if k != "relationship_types"}


def _state_shared_edge_fields(out: dict) -> None:
    """
    Edge fields every relationship row holds with the same value (how the edges were
    resolved, their confidence, the other side's kind), stated once as
    ``relationships_shared`` instead of in each row.
    """
    rows = out.get("relationships")
    if not isinstance(rows, list) or len(rows) < 2 or not all(isinstance(r, dict) for r in rows):
        return
    shared = {}
    for key in _SHARED_EDGE_KEYS:
        values = [row.get(key, _MISSING) for row in rows]
        if values[0] is not _MISSING and all(value == values[0] for value in values):
            shared[key] = values[0]
    if shared:
        out["relationships"] = [{k: v for k, v in row.items() if k not in shared} for row in rows]
        out["relationships_shared"] = shared


def _trim_dead_code_policy(out: dict) -> None:
    """
    A dead-code ``analysis`` block cut to what concerns this answer: the languages'
    maturity and exactness blockers and the notes. Its policy lists (recognised
    frameworks, modeled entry points and public API, root categories) read the same on
    every call. A candidate scan that was not cut loses its limits too.
    """
    analysis = out.get("analysis")
    if isinstance(analysis, dict) and "dead_code_language_maturity" in analysis:
        out["analysis"] = {k: v for k, v in analysis.items() if k in _DEAD_CODE_ANALYSIS}
    if out.get("candidate_scan_truncated") is False:
        for key in ("candidate_scan_limit", "candidate_scan_limit_per_label"):
            out.pop(key, None)


def _count_topic_kind_lists(out: dict) -> None:
    """
    A topic answer's ``matched_files`` and ``matched_symbols``, when every row of theirs is
    in ``evidence_groups`` (the same rows, ranked together): ``matched_file_count`` and
    ``matched_symbol_count`` say how many there are.
    """
    groups = out.get("evidence_groups")
    if not isinstance(groups, list):
        return
    ranked = [_unranked(row) for row in groups]  # a lone row keeps the rank a list drops
    for key in _TOPIC_KIND_LISTS:
        rows = out.get(key)
        if isinstance(rows, list) and all(_unranked(row) in ranked for row in rows):
            del out[key]
            out[f"{key[:-1]}_count"] = len(rows)


def _unranked(row: Any) -> Any:
    return {k: v for k, v in row.items() if k != "rank"} if isinstance(row, dict) else row


def _drop_metadata_repeats(out: dict) -> None:
    """
    ``answer_metadata`` entries the answer holds at its top level with the same value
    (its coverage, truncation flag, next calls), and its ``evidence_handles`` when each is
    the handle of the ``evidence_groups`` row in the same place.
    """
    metadata = out.get("answer_metadata")
    if not isinstance(metadata, dict):
        return
    kept = {key: value for key, value in metadata.items() if out.get(key, _MISSING) != value}
    if _handles_of(kept.get("evidence_handles"), out.get("evidence_groups")):
        del kept["evidence_handles"]
    out["answer_metadata"] = kept


def _handles_of(handles: Any, rows: Any) -> bool:
    """Whether ``handles`` are, one for one, the entity or file handles of ``rows``."""
    if not isinstance(handles, list) or not isinstance(rows, list) or len(handles) != len(rows):
        return False
    for handle, row in zip(handles, rows, strict=True):
        if not isinstance(row, dict):
            return False
        if isinstance(handle, str):
            if handle != f"entity:{row.get('entity_id')}":
                return False
        elif not isinstance(handle, dict) or handle.get("file_path") != row.get("relative_path"):
            return False
    return True


def _list_playbooks_briefly(out: dict) -> None:
    """
    A playbook listing that says what each playbook is for, what it needs and which tools
    it calls (``step_tools``); its steps' parameters and failure modes come with
    ``resolve_query_playbook``. A ``versions`` list that only repeats each playbook's
    own id and version goes too.
    """
    playbooks = out.get("playbooks")
    if not isinstance(playbooks, list) or not all(
        isinstance(row, dict) and isinstance(row.get("steps"), list) for row in playbooks
    ):
        return
    brief = []
    for row in playbooks:
        kept = {key: row[key] for key in _PLAYBOOK_KEYS if key in row}
        kept["step_tools"] = [step.get("tool") for step in row["steps"] if isinstance(step, dict)]
        brief.append(kept)
    out["playbooks"] = brief
    out["playbook_note"] = PLAYBOOK_NOTE
    own = [{"id": row.get("id"), "version": row.get("version")} for row in playbooks]
    if out.get("versions") == own:
        del out["versions"]
