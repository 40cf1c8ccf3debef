"""
Answer rows for summary tests, as the embedded backend gives them: in Eshu's full shape
and in the compact view (snippets, no aliases, the anchor's details stated once).
"""


def truth(level="exact", state="fresh", **freshness):
    return {"level": level, "freshness": {"state": state, **freshness}}


def envelope(data, level="exact", state="fresh", **freshness):
    return {"data": data, "truth": truth(level, state, **freshness), "error": None}


def utf8_len(text: str) -> int:
    return len(text.encode("utf-8"))


def full_entity(name, path, line, kind="Function", owner=None, **extra):
    """An entity row in Eshu's full shape: source, labels, metadata, source handle."""
    metadata = {"args": ["self"], "docstring": "d" * 300}
    if owner:
        metadata["class_context"] = owner
    return {
        "end_line": line + 9,
        "entity_id": f"content-entity:e_{name.lower()}",
        "entity_name": name,
        "entity_type": kind,
        "file_path": path,
        "labels": [kind],
        "language": "python",
        "metadata": metadata,
        "name": name,
        "relative_path": path,
        "repo_id": "repository:r_1",
        "repo_name": "twisted",
        "source_cache": f"def {name}(self):\n" + "    pass\n" * 40,
        "source_handle": {"relative_path": path, "start_line": line, "end_line": line + 9},
        "start_line": line,
        **extra,
    }


def compact_entity(name, path, line, kind="Function", owner=None, **extra):
    """The same row trimmed: a snippet, no aliases, no repeated blocks, other key names."""
    row = {"entity_id": f"content-entity:e_{name.lower()}", "name": name, "path": path}
    row.update({"line": line, "type": kind, "source": f"def {name}(self):", **extra})
    row["source_truncated"] = True
    if owner:
        row["class_name"] = owner
    return row


def compact_view_entity(name, path, line, kind="Function", owner=None, **extra):
    """The row as the compact view writes it: aliases and repeats gone, source a header."""
    row = {"end_line": line + 9, "entity_id": f"content-entity:e_{name.lower()}"}
    row.update(entity_type=kind, file_path=path, name=name, start_line=line, **extra)
    row.update(source_cache=f"def {name}(self):", source_truncated=True)
    if owner:
        row["metadata"] = {"class_context": owner}
    return row


SHAPES = {"full": full_entity, "compact": compact_entity, "compact view": compact_view_entity}


def edge(source, target, path, line, *, direction="incoming", kind="CALLS", compact=False):
    row = {
        "direction": direction,
        "type": kind,
        "line_number": line,
        "source_name": source,
        "source_file_path": path,
        "target_name": target,
        "target_file_path": "twisted/internet/defer.py",
        "target_start_line": 1597,
    }
    if compact:
        # The envelope states the anchor once: rows keep only the other end.
        del row["target_file_path"], row["target_start_line"]
        if direction == "incoming":
            del row["target_name"]
        else:
            del row["source_name"]
    else:
        row["provenance"] = {"truth_state": "derived", "heuristic": False}
        row["source_handle"] = "entity:content-entity:e_1"
    return row


def relationship_story(
    rows, *, direction="incoming", kind="CALLS", available=None, truncated=False
):
    return {
        "relationships": rows,
        "scope": {"direction": direction, "relationship_type": kind, "limit": 25, "offset": 0},
        "coverage": {
            "available_by_direction": {direction: available or len(rows)},
            "truncated": truncated,
            "missing_edge_reason": "truncated_by_limit" if truncated else "complete",
        },
        "target_resolution": {
            "status": "resolved",
            "name": "gatherResults",
            "target": "gatherResults",
            "entity_id": "content-entity:e_g",
        },
    }


def derived(data, state="fresh"):
    return envelope(data, "derived", state)
