"""
Tests for the long-lived indexer child's loop (eshu_mcp.query.local.index.build.builder) and for
what a build says about itself: the summary's counts agree with ``eshu-mcp index --status``,
and the terminal progress names the resolve step.
"""

from __future__ import annotations

import io
import json
import shutil
import tempfile
from pathlib import Path

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.build import builder
from eshu_mcp.query.local.index.build.command import collect_status
from eshu_mcp.query.local.index.build.progress import TerminalProgress
from eshu_mcp.query.local.index.store.database import open_reader
from tests.test_index_indexer import fixture_repository


class BuilderLoopTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="eshu-builder-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.repo = fixture_repository(self.tmp)
        self.db = str(self.tmp / "index.sqlite")

    def serve(self, *requests: dict) -> list[dict]:
        lines = "".join(json.dumps(request) + "\n" for request in requests)
        out = io.StringIO()
        self.assertEqual(builder.serve(self.db, io.StringIO(lines + "not json\n"), out), 0)
        return [json.loads(line) for line in out.getvalue().splitlines()]

    def built(self, events: list[dict]) -> list[dict]:
        return [event for event in events if event["phase"] == builder.BUILT]

    def status_counts(self) -> dict:
        conn = open_reader(self.db)
        try:
            (repo,) = collect_status(conn)["repositories"]
        finally:
            conn.close()
        return {key: repo[key] for key in ("files", "entities", "edges")}

    def test_each_request_ends_with_one_built_line_whose_counts_agree_with_status(self) -> None:
        (self.repo / "app" / "extra.py").write_text("def extra():\n    return 1\n")
        events = self.serve(
            {"build": 1, "paths": [str(self.repo)], "workers": 1},
            {"build": 2, "paths": [str(self.repo)], "workers": 1},
        )
        first, second = self.built(events)
        self.assertEqual((first["build"], first["ok"], second["build"]), (1, True, 2))
        self.assertTrue(all("build" in event for event in events))
        (repo,) = first["repositories"]
        self.assertEqual(repo["status"], "indexed")
        self.assertGreater(repo["parsed"], 1)
        self.assertEqual({k: repo[k] for k in ("files", "entities", "edges")}, self.status_counts())
        self.assertEqual(second["repositories"][0]["status"], "fresh")
        phases = [event["phase"] for event in events if event["build"] == 1]
        self.assertLess(phases.index("resolve"), phases.index("committed"))

    def test_a_failed_build_is_reported_and_the_next_one_still_runs(self) -> None:
        events = self.serve(
            {"build": 1, "paths": [str(self.tmp / "gone")]},
            {"build": 2, "paths": [str(self.repo)], "workers": 1},
        )
        failed, succeeded = self.built(events)
        self.assertFalse(failed["ok"])
        self.assertIn("gone", failed["error"])
        self.assertTrue(succeeded["ok"])


class TerminalProgressTests(SynchronousTestCase):
    def test_the_resolve_step_is_named_after_the_bar(self) -> None:
        stream = io.StringIO()
        progress = TerminalProgress(stream)
        progress({"phase": "parse", "done": 2, "total": 2, "rate": 9.0})
        progress({"phase": "resolve", "repo_id": "r"})
        self.assertIn("2/2 files", stream.getvalue())
        self.assertTrue(stream.getvalue().endswith("\n  resolving references and calls ...\n"))

    def test_the_committed_line_counts_edges_only(self) -> None:
        stream = io.StringIO()
        edges = {"CALLS": 5, "CONTAINS": 7, "unresolved_calls": 3, "rebuilt_files": 2}
        TerminalProgress(stream)({"phase": "committed", "seq": 4, "entities": 9, "edges": edges})
        self.assertEqual(stream.getvalue(), "  generation 4 active: 9 entities written, 12 edges\n")
