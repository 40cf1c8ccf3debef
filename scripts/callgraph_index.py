"""
What the index says, for scripts/bench_callgraph.py: definitions, CALLS and INHERITS edges
read from the documented views (``entities``, ``edges``, ``files``) of a read-only index.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict

import attr


@attr.s(frozen=True, slots=True)
class Entity:
    entity_id: str = attr.ib()
    path: str = attr.ib()
    line: int = attr.ib()  # start_line: the line of the name (the ``def``/``class`` line)
    name: str = attr.ib()
    entity_type: str = attr.ib()
    qualified_name: str = attr.ib()

    @property
    def key(self) -> tuple[str, int]:
        return (self.path, self.line)


@attr.s(frozen=True, slots=True)
class CallEdge:
    source: tuple[str, int] = attr.ib()  # (path, line) of the caller; line 0 for a file
    target: Entity = attr.ib()
    path: str = attr.ib()  # file holding the call
    line: int = attr.ib()
    call_kind: str | None = attr.ib()
    method: str = attr.ib()
    confidence: float | None = attr.ib()


@attr.s(slots=True)
class IndexView:
    repo_id: str = attr.ib()
    entities: dict[str, Entity] = attr.ib()
    by_name: dict[str, list[Entity]] = attr.ib()
    calls: list[CallEdge] = attr.ib()
    inherits: list[tuple[str, str, str]] = attr.ib()  # (source id, target id, method)

    def definitions(self, name: str) -> list[Entity]:
        return [e for e in self.by_name.get(name, ()) if e.entity_type in ("Function", "Class")]

    def calls_into(self, name: str) -> list[CallEdge]:
        ids = {e.entity_id for e in self.definitions(name)}
        return [edge for edge in self.calls if edge.target.entity_id in ids]


def load_index(conn: sqlite3.Connection) -> IndexView:
    """Read the Python definitions and the CALLS/INHERITS edges of the one repository."""
    (repo_id,) = conn.execute("SELECT repo_id FROM repositories").fetchone()
    paths = {
        f"file:{fid}": path
        for fid, path in conn.execute("SELECT file_id, relative_path FROM files")
    }
    entities: dict[str, Entity] = {}
    by_name: dict[str, list[Entity]] = defaultdict(list)
    for row in conn.execute(
        "SELECT entity_id, relative_path, start_line, entity_name, entity_type, qualified_name"
        " FROM entities WHERE language = 'python'"
    ):
        entity = Entity(*row)
        entities[entity.entity_id] = entity
        by_name[entity.name].append(entity)
    calls = []
    for source, target, path, line, kind, method, confidence in conn.execute(
        "SELECT e.source_id, e.target_id, f.relative_path, e.line_number, e.call_kind,"
        " e.resolution_method, e.confidence"
        " FROM edges e LEFT JOIN files f ON f.file_id = e.evidence_file_id"
        " WHERE e.type = 'CALLS'"
    ):
        entity = entities.get(target)
        if entity is None:
            continue
        known = entities.get(source)
        source_key = known.key if known else (paths.get(source, path), 0)
        calls.append(CallEdge(source_key, entity, path, line, kind, str(method), confidence))
    inherits = [
        tuple(row)
        for row in conn.execute(
            "SELECT source_id, target_id, resolution_method FROM edges WHERE type = 'INHERITS'"
        )
    ]
    return IndexView(repo_id, entities, dict(by_name), calls, inherits)
