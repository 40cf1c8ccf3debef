"""
Substring search over file bodies and entity sources by scanning ``files.content``.

The index keeps no substring index: ``files_fts`` holds word tokens and entity source is
not stored (the ``entity_source`` view slices it out of the file body). "Contains X" is
therefore a ``LIKE`` scan over ``files.content`` (milliseconds for a large repository),
and "an entity whose source contains X" is a file that contains X plus, checked in
Python, an occurrence lying wholly inside the entity's UTF-8 byte span
``[start_byte, end_byte)``: the rows ``entity_source.source_cache LIKE '%X%'`` gives,
without slicing every entity out of its file. Matching follows SQLite's ``LIKE``: ASCII
letters ignore case, every other character matches only itself.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from attrs import frozen

from eshu_mcp.query.local.api.code.common import like_pattern

FILE_ORDER = "f.repo_id, f.relative_path"


def fold(text: str) -> bytes:
    """``text`` as UTF-8 with ASCII letters lower-cased: what ``LIKE`` compares."""
    return text.encode("utf-8").lower()


@frozen
class ScannedFile:
    """One file whose body contains a needle: its row, its UTF-8 body and the folded body."""

    row: sqlite3.Row | None
    body: bytes
    folded: bytes

    @property
    def file_id(self) -> int:
        """The file's id (``entities.file_id``)."""
        assert self.row is not None
        return int(self.row["file_id"])

    def contains(self, needle: bytes) -> bool:
        """Whether a folded needle occurs anywhere in the body."""
        return needle in self.folded

    def rows_holding(self, needle: bytes, rows: Iterable[Sequence[Any]]) -> list[Any]:
        """
        The rows whose span holds a folded needle wholly; a row's last two items are its
        ``start_byte`` and ``end_byte`` (a missing or negative span holds nothing). Check
        :meth:`contains` first when the needle may be absent from the whole file.
        """
        find = self.folded.find
        held = []
        for row in rows:
            start, end = row[-2], row[-1]
            if start is None or end is None or start < 0:
                continue
            if find(needle, start, end) >= 0:
                held.append(row)
        return held

    def source(self, start: int | None, end: int | None) -> str:
        """The text of the byte span ``[start, end)`` (an entity's source)."""
        if start is None or end is None:
            return ""
        return self.body[max(start, 0) : max(end, 0)].decode("utf-8", "replace")


def plain_rows(conn: sqlite3.Connection, sql: str, params: Sequence[Any]) -> list[tuple]:
    """A query's rows as plain tuples (cheaper than ``sqlite3.Row`` for many small rows)."""
    cursor = conn.cursor()
    cursor.row_factory = None
    try:
        return cursor.execute(sql, params).fetchall()
    finally:
        cursor.close()


def file_ids_containing(
    conn: sqlite3.Connection, needles: Sequence[str], where: str, params: Sequence[Any]
) -> list[int]:
    """Ids of the files matching ``where`` (alias ``f``) whose content contains a needle."""
    if not needles:
        return []
    likes = " OR ".join("f.content LIKE ? ESCAPE '\\'" for _ in needles)
    sql = f"SELECT f.file_id FROM files f WHERE {where} AND ({likes}) ORDER BY f.file_id"
    return [row[0] for row in conn.execute(sql, [*params, *(like_pattern(n) for n in needles)])]


class FileBodies:
    """File bodies read on demand, each once: for walking entities in an order across files."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self._files: dict[int, ScannedFile] = {}

    def get(self, file_id: int) -> ScannedFile:
        """The file's body (empty when the file is gone)."""
        scanned = self._files.get(file_id)
        if scanned is None:
            row = self._conn.execute(
                "SELECT file_id, content FROM files WHERE file_id = ?", (file_id,)
            ).fetchone()
            body = (row[1] or "").encode("utf-8") if row is not None else b""
            scanned = self._files[file_id] = ScannedFile(row=row, body=body, folded=body.lower())
        return scanned


def scan_files(
    conn: sqlite3.Connection,
    needles: Sequence[str],
    where: str = "1 = 1",
    params: Sequence[Any] = (),
    order: str = FILE_ORDER,
) -> Iterator[ScannedFile]:
    """
    Files matching ``where`` (alias ``f``) whose content contains any of ``needles``.

    Rows come lazily in ``order`` and carry ``file_id``, ``repo_id``, ``relative_path``,
    ``language`` and ``content``; stop iterating to stop the scan.
    """
    if not needles:
        return
    likes = " OR ".join("f.content LIKE ? ESCAPE '\\'" for _ in needles)
    sql = (
        "SELECT f.file_id, f.repo_id, f.relative_path, f.language, f.content FROM files f"
        f" WHERE {where} AND ({likes}) ORDER BY {order}"
    )
    for row in conn.execute(sql, [*params, *(like_pattern(n) for n in needles)]):
        body = (row["content"] or "").encode("utf-8")
        yield ScannedFile(row=row, body=body, folded=body.lower())


def entities_containing(
    conn: sqlite3.Connection,
    needle: str,
    *,
    file_where: str,
    file_params: Sequence[Any],
    entity_sql: str,
    entity_params: Sequence[Any] = (),
) -> Iterator[tuple[sqlite3.Row, ScannedFile]]:
    """
    Entities whose source contains ``needle``, in file order (repository, path).

    ``entity_sql`` selects one file's entities (its first parameter is the file id, then
    ``entity_params``) in the order wanted within a file, ``start_byte`` and ``end_byte``
    last. Lazy: a caller that needs ``n`` rows reads only the files that hold them.
    """
    folded = fold(needle)
    for scanned in scan_files(conn, [needle], file_where, file_params):
        rows = conn.execute(entity_sql, [scanned.file_id, *entity_params]).fetchall()
        for row in scanned.rows_holding(folded, rows):
            yield row, scanned
