"""
A repository's edge counts by type through an incremental build, without counting them.

Every build reports how many edges the repository has by type; counting them read the
whole edge table (about 3.5 million rows at 26k files, most of a one-file build's time).
A process that keeps graph inputs between builds keeps the counts too (:mod:`.input_cache`),
and a build that starts from them counts only the rows it inserts and deletes, through
temporary triggers on its own connection (created inside the build's transaction, so a
rolled-back build leaves none behind).
"""

from __future__ import annotations

import sqlite3

from attrs import define

from eshu_mcp.query.local.index.resolve import input_cache

TRIGGERS = ("eshu_edge_added", "eshu_edge_removed")


@define
class EdgeTally:
    """Edge counts by type code as a build started with them, plus what it changed since."""

    conn: sqlite3.Connection
    before: dict[int, int]
    counting: bool = True

    @classmethod
    def start(cls, conn: sqlite3.Connection, repo_id: str, repo_key: int) -> EdgeTally | None:
        """Inside a build's transaction, before it changes any edge: a tally, when this
        process kept the counts of exactly the index's active generation; else None."""
        before = input_cache.kept_edge_counts(conn, repo_id)
        if before is None:
            return None
        _drop(conn)
        conn.execute(
            "CREATE TEMP TABLE IF NOT EXISTS eshu_edge_delta"
            " (type INTEGER PRIMARY KEY, delta INTEGER NOT NULL)"
        )
        conn.execute("DELETE FROM temp.eshu_edge_delta")
        key = int(repo_key)  # a trigger takes no parameters: an integer, written out
        for name, event, row, step in (
            (TRIGGERS[0], "INSERT", "NEW", 1),
            (TRIGGERS[1], "DELETE", "OLD", -1),
        ):
            conn.execute(
                f"CREATE TEMP TRIGGER {name} AFTER {event} ON main.edge_rows"
                f" WHEN {row}.repo = {key} BEGIN"
                f" INSERT INTO eshu_edge_delta (type, delta) VALUES ({row}.type, {step})"
                f" ON CONFLICT (type) DO UPDATE SET delta = delta + ({step}); END"
            )
        return cls(conn, dict(before))

    def counts(self) -> dict[int, int]:
        """The counts now (the build's changes applied); stops counting."""
        delta = dict(self.conn.execute("SELECT type, delta FROM temp.eshu_edge_delta"))
        self.stop()
        counts = dict(self.before)
        for code, change in delta.items():
            counts[code] = counts.get(code, 0) + change
        return {code: count for code, count in counts.items() if count}

    def stop(self) -> None:
        """Stop counting (a build that recounts everything)."""
        if self.counting:
            _drop(self.conn)
            self.conn.execute("DELETE FROM temp.eshu_edge_delta")
            self.counting = False


def _drop(conn: sqlite3.Connection) -> None:
    for name in TRIGGERS:
        conn.execute(f"DROP TRIGGER IF EXISTS temp.{name}")
