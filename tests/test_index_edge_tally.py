"""
Tests for edge counts kept through incremental builds (eshu_mcp.query.local.index.resolve.
edge_tally): a process that keeps graph inputs reports, after every build, the edge counts
by type a recount of the index gives (edits, an added and a deleted file, another writer's
build), and a build that rolled back leaves no trigger and no count behind.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.build.indexer import index_repositories
from eshu_mcp.query.local.index.resolve import input_cache
from eshu_mcp.query.local.index.resolve.edge_tally import EdgeTally
from eshu_mcp.query.local.index.store.codes import EDGE_TYPES
from eshu_mcp.query.local.index.store.database import open_writer
from tests.test_index_input_cache import BASE, CHILD, filler, make_repository

LATE = "from pkg.base import Base\n\n\nclass Late(Base):\n    def step(self):\n        return 5\n"
NAMES = {code: name for name, code in EDGE_TYPES.items()}


class KeptEdgeCountsTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="eshu-tally-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.repo = make_repository(self.tmp)
        self.db = self.tmp / "index.sqlite"
        input_cache.keep_between_builds(False)  # nothing kept from another test
        input_cache.keep_between_builds()
        self.addCleanup(input_cache.keep_between_builds, False)
        report = index_repositories(self.db, [self.repo], workers=1)
        self.repo_id = report.repositories[0].repo_id
        input_cache.warm(self.db, [self.repo_id])  # as the builder child does

    def recount(self) -> dict[int, int]:
        conn = open_writer(self.db)
        try:
            return dict(
                conn.execute(
                    "SELECT type, COUNT(*) FROM edge_rows WHERE repo = (SELECT repo_key"
                    " FROM repositories WHERE repo_id = ?) GROUP BY type",
                    (self.repo_id,),
                )
            )
        finally:
            conn.close()

    def kept(self) -> dict[int, int] | None:
        conn = open_writer(self.db)
        try:
            return input_cache.kept_edge_counts(conn, self.repo_id)
        finally:
            conn.close()

    def build(self, step: str, path: str, text: str | None) -> None:
        target = self.repo / path
        if text is None:
            target.unlink()
        else:
            target.write_text(text)
        report = index_repositories(
            self.db, [self.repo], workers=1, changed={str(self.repo): [path]}
        )
        (repository,) = report.repositories
        reported = {k: v for k, v in repository.edges.items() if k != "rebuilt_files"}
        recounted = self.recount()
        self.assertEqual((step, reported), (step, {NAMES[c]: n for c, n in recounted.items()}))
        self.assertEqual((step, self.kept()), (step, recounted))  # the next build starts here

    def test_every_build_reports_the_counts_a_recount_gives(self) -> None:
        self.assertEqual(self.kept(), self.recount())  # warmed: counted once
        self.build("body edit", "pkg/filler_0.py", filler(0) + "\ndef a():\n    return 1\n")
        self.build(
            "method added", "pkg/base.py", BASE + "\n    def extra(self):\n        return 3\n"
        )
        self.build(
            "override added", "pkg/child.py", CHILD + "\n    def run(self):\n        return 4\n"
        )
        self.build("override removed", "pkg/child.py", CHILD)
        self.build(
            "file added",
            "pkg/late.py",
            LATE,
        )
        self.build("file deleted", "pkg/more.py", None)
        self.build("calls removed", "pkg/filler_1.py", "")

    def test_another_writers_build_makes_the_next_one_recount(self) -> None:
        self.build("kept", "pkg/filler_0.py", filler(0) + "\ndef a():\n    return 1\n")
        input_cache.keep_between_builds(False)  # another process: keeps nothing
        (self.repo / "pkg" / "filler_2.py").write_text("")
        index_repositories(self.db, [self.repo], workers=1)
        input_cache.keep_between_builds()
        self.assertIsNone(self.kept())
        self.build("after", "pkg/filler_3.py", filler(3) + "\ndef c():\n    return 3\n")

    def test_a_rolled_back_build_leaves_no_trigger_and_no_count(self) -> None:
        conn = open_writer(self.db)
        try:
            (repo_key,) = conn.execute(
                "SELECT repo_key FROM repositories WHERE repo_id = ?", (self.repo_id,)
            ).fetchone()
            conn.execute("BEGIN IMMEDIATE")
            tally = EdgeTally.start(conn, self.repo_id, repo_key)
            self.assertIsNotNone(tally)
            conn.execute("DELETE FROM edge_rows WHERE repo = ?", (repo_key,))
            self.assertEqual(tally.counts(), {})  # every edge deleted, counted as it went
            tally = EdgeTally.start(conn, self.repo_id, repo_key)
            conn.execute("ROLLBACK")
            triggers = conn.execute(
                "SELECT name FROM sqlite_temp_master WHERE type = 'trigger'"
            ).fetchall()
            self.assertEqual(triggers, [])
        finally:
            conn.close()
        self.assertEqual(self.kept(), self.recount())  # nothing was committed
        self.build("after", "pkg/filler_0.py", filler(0) + "\ndef a():\n    return 1\n")
