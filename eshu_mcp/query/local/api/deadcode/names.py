"""
The name-level safety net of the dead-code scan: a candidate whose name is written anywhere
else in its repository (another file, or its own file outside its own definition) may be
used through something the call graph cannot resolve (an untyped receiver, dynamic
dispatch, a string, another repository's code) and is not reported as dead.

Other files of the repository are checked through the word index (``files_fts``); the
candidate's own file by a whole-word scan of its text outside the definition's byte span.
Both fold case, so ``Foo`` and ``foo`` count as the same name: the check errs towards "used".
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence
from typing import Any

from eshu_mcp.query.local.api.code.common import in_clauses
from eshu_mcp.query.local.index.parse.registry import keys_with

REASON = "name_used_elsewhere"
_EQUATIONS = keys_with(equations=True)
_WORD = re.compile(r"\w+\Z", re.ASCII)
_WORD_BYTE = re.compile(rb"\w").match


def mentioned_elsewhere(conn: sqlite3.Connection, rows: Sequence[dict[str, Any]]) -> set[int]:
    """The rids among ``rows`` (entity rows with rid, name, file, repository and byte span)
    whose name appears outside their own definition in their repository."""
    by_name: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        name = row["entity_name"]
        if _WORD.match(name):
            by_name.setdefault(name, []).append(row)
    if not by_name:
        return set()
    repo_files = {
        repo_id: {
            file_id
            for (file_id,) in conn.execute(
                "SELECT file_id FROM files WHERE repo_id = ?", (repo_id,)
            )
        }
        for repo_id in {row["repo_id"] for row in rows}
    }
    found: set[int] = set()
    own_file: list[dict[str, Any]] = []
    for name, group in by_name.items():
        undecided = list(group)
        holders = conn.execute(
            "SELECT rowid FROM files_fts WHERE files_fts MATCH ?", (f'"{name}"',)
        )
        for (file_id,) in holders:  # reading stops once every row of the name is decided
            still = []
            for row in undecided:
                if file_id != row["file_id"] and file_id in repo_files[row["repo_id"]]:
                    found.add(row["rid"])
                else:
                    still.append(row)
            undecided = still
            if not undecided:
                break
        holders.close()
        own_file += undecided
    found |= _mentioned_in_own_file(conn, own_file)
    return found


def _mentioned_in_own_file(conn: sqlite3.Connection, rows: list[dict[str, Any]]) -> set[int]:
    by_file: dict[int, list[dict[str, Any]]] = {}
    for row in rows:
        by_file.setdefault(row["file_id"], []).append(row)
    found: set[int] = set()
    for clause, params in in_clauses("file_id", sorted(by_file)):
        for file_id, content in conn.execute(
            f"SELECT file_id, content FROM files WHERE {clause}", params
        ):
            data = (content or "").encode("utf-8").lower()
            lines: list[int] | None = None
            for row in by_file[file_id]:
                start, end = row.get("start_byte"), row.get("end_byte")
                if start is None or end is None:  # no byte span stored: use the lines
                    if lines is None:
                        lines = _line_starts(data)
                    start, end = _line_span(lines, row["start_line"], row["end_line"], len(data))
                own_lines = row.get("language") in _EQUATIONS
                word = row["entity_name"].lower().encode()
                if _word_outside(data, word, start, end, own_lines):
                    found.add(row["rid"])
    return found


def _word_outside(data: bytes, word: bytes, start: int, end: int, own_lines: bool) -> bool:
    """Whether ``word`` occurs as a whole word in ``data`` outside ``[start, end)`` (with
    ``own_lines``, not counting a line it starts: a signature or a further equation)."""
    at = data.find(word)
    size = len(word)
    while at >= 0:
        if not start <= at < end and not (own_lines and (at == 0 or data[at - 1] == 10)):
            before = data[at - 1 : at] if at else b""
            after = data[at + size : at + size + 1]
            if not (before and _WORD_BYTE(before)) and not (after and _WORD_BYTE(after)):
                return True
        at = data.find(word, at + 1)
    return False


def _line_starts(data: bytes) -> list[int]:
    starts = [0]
    starts += [index + 1 for index, byte in enumerate(data) if byte == 10]
    return starts


def _line_span(starts: list[int], first: int, last: int, size: int) -> tuple[int, int]:
    """Byte span of lines ``first``..``last`` (1-based, inclusive)."""
    begin = starts[min(max(first, 1), len(starts)) - 1]
    end = starts[last] if 0 < last < len(starts) else size
    return begin, end


PREFIX_REASON = "python.prefix_dispatch"
_PREFIX = re.compile(r"(_?[A-Za-z][A-Za-z0-9]*_)[A-Za-z0-9]")
_NUMBERED = re.compile(r"([A-Za-z][A-Za-z_]*[A-Za-z])[0-9]+$")


FAMILY = 3
"""Methods of one class sharing a prefix that make it a dispatch family."""


def dispatched_by_prefix(conn: sqlite3.Connection, rows: Sequence[dict[str, Any]]) -> set[int]:
    """
    Python methods named ``<prefix>_<rest>`` (``irc_PRIVMSG``, ``opt_verbose``,
    ``do_LIST``) or ``<stem><number>`` (``upgradeToVersion2``) whose prefix or stem is
    written on its own somewhere in their repository (``getattr(self, "irc_%s" % command)``,
    ``"opt_" + name``, ``"upgradeToVersion%s" % version``): dispatched by a computed name.
    A family of at least :data:`FAMILY` such methods in one class (``isupport_CHANLIMIT``,
    ``isupport_NICKLEN``...; ``_bodyDataFinished_INITIAL``, ``..._CONNECTED``...) also counts
    when only the stem is written (``prefix = "isupport"`` with ``f"{self.prefix}_{name}"``,
    ``makeStatefulDispatcher("bodyDataFinished", ...)``).
    """
    by_prefix: dict[tuple[str, str], list[int]] = {}
    family: dict[tuple[str, str, str, str], int] = {}
    for row in rows:
        if row["language"] != "python" or not row.get("class_context"):
            continue
        numbered = _NUMBERED.match(row["entity_name"])
        if numbered is not None:  # upgradeToVersion2: "upgradeToVersion%s" % version
            by_prefix.setdefault((numbered[1].lower(), row["repo_id"]), []).append(row["rid"])
        match = _PREFIX.match(row["entity_name"])
        if match is not None:
            prefix = match[1].lower()
            by_prefix.setdefault((prefix, row["repo_id"]), []).append(row["rid"])
            key = (prefix, row["repo_id"], row["relative_path"], row["class_context"])
            family[key] = family.get(key, 0) + 1
    families = {(prefix, repo_id) for (prefix, repo_id, _, _), n in family.items() if n >= FAMILY}
    found: set[int] = set()
    for (prefix, repo_id), rids in by_prefix.items():
        terms = [f'"{prefix}"']
        stem = prefix.strip("_")
        if (prefix, repo_id) in families and stem:
            terms.append(f'"{stem}"')
        hit = conn.execute(
            "SELECT 1 FROM files f WHERE f.repo_id = ? AND f.file_id IN"
            " (SELECT rowid FROM files_fts WHERE files_fts MATCH ?) LIMIT 1",
            (repo_id, " OR ".join(terms)),
        ).fetchone()
        if hit is not None:
            found.update(rids)
    return found


TEMPLATE_REASON = "python.template_dispatch"
_TEMPLATE = re.compile(r"""["']([A-Za-z0-9_]*)(?:%[sdr]|\{[^{}'"]*\})([A-Za-z0-9_]*)["']""")
"""A string of one name with one placeholder: ``"_%s_Function"``, ``f"visit_{kind}"``."""


def dispatched_by_template(conn: sqlite3.Connection, rows: Sequence[dict[str, Any]]) -> set[int]:
    """
    Python definitions whose name a string template of their own file builds, with literal
    text on both sides of the placeholder: ``_not_Function`` and ``_text_Function`` for
    ``globals()["_%s_Function" % fname]``. Both sides must match, so one template speaks
    for one family of names; one-sided templates are :func:`dispatched_by_prefix`'s.
    """
    by_file: dict[int, list[dict[str, Any]]] = {}
    for row in rows:
        if row["language"] == "python":
            by_file.setdefault(row["file_id"], []).append(row)
    found: set[int] = set()
    for clause, params in in_clauses("file_id", sorted(by_file)):
        for file_id, content in conn.execute(
            f"SELECT file_id, content FROM files WHERE {clause}", params
        ):
            templates = {
                (head, tail)
                for head, tail in _TEMPLATE.findall(content or "")
                if head and tail and len(head + tail) >= 4
            }
            for row in by_file[file_id]:
                name = row["entity_name"]
                if any(
                    len(name) > len(head) + len(tail)
                    and name.startswith(head)
                    and name.endswith(tail)
                    for head, tail in templates
                ):
                    found.add(row["rid"])
    return found
