"""Tests for eshu_mcp.query.local.index.build.command: the ``eshu-mcp index`` CLI."""

import io
import json
import os
import shutil
import sqlite3
import tempfile
from pathlib import Path

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.build import command
from eshu_mcp.query.local.index.build.progress import TerminalProgress, render_bar
from tests.test_index_indexer import fixture_repository


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


class IndexCommandTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="eshu-cli-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.repo = fixture_repository(self.tmp)
        self.db = self.tmp / "index.sqlite"

    def run_main(self, *argv: str, stderr=None) -> tuple[int, str, str]:
        out, err = io.StringIO(), stderr or io.StringIO()
        code = command.main(list(argv), stdout=out, stderr=err)
        return code, out.getvalue(), err.getvalue()

    def test_json_mode_prints_one_line_per_phase(self) -> None:
        code, out, _ = self.run_main("index", str(self.repo), "--db", str(self.db), "--json")
        self.assertEqual(code, 0)
        phases = [json.loads(line)["phase"] for line in out.splitlines()]
        self.assertEqual(
            phases, ["discover", "walk", "write", "parse", "resolve", "committed", "done"]
        )

    def test_status_reports_repositories_generations_and_counts(self) -> None:
        self.run_main(str(self.repo), "--db", str(self.db), "--json")
        code, out, _ = self.run_main("--status", "--db", str(self.db), "--json")
        self.assertEqual(code, 0)
        status = json.loads(out)
        (repo,) = status["repositories"]
        self.assertEqual(repo["generations"], {"active": 1})
        self.assertEqual(repo["active_seq"], 1)
        self.assertGreater(repo["entities"], 40)
        code, text, _ = self.run_main("--status", "--db", str(self.db))
        self.assertIn("generation 1", text)

    def test_terminal_mode_draws_a_bar_on_stderr_and_a_summary_on_stdout(self) -> None:
        err = _Tty()
        code, out, _ = self.run_main(str(self.repo), "--db", str(self.db), stderr=err)
        self.assertEqual(code, 0)
        self.assertIn("files", err.getvalue())
        self.assertIn("generation 1 active", err.getvalue())
        self.assertTrue(out.startswith("indexed "))

    def test_missing_path_is_a_one_line_error_with_status_2(self) -> None:
        code, out, err = self.run_main(str(self.tmp / "nope"), "--db", str(self.db))
        self.assertEqual((code, out), (2, ""))
        self.assertEqual(err.count("\n"), 1)
        self.assertIn("does not exist", err)

    def test_unreadable_database_is_an_error_with_status_2(self) -> None:
        bogus = self.tmp / "bogus.sqlite"
        bogus.write_bytes(b"this is not a database" * 100)
        code, _, err = self.run_main(str(self.repo), "--db", str(bogus))
        self.assertEqual(code, 2)
        self.assertIn(f"index database {bogus} is damaged (file is not a database)", err)
        code, _, err = self.run_main("--status", "--db", str(self.tmp / "absent.sqlite"))
        self.assertEqual(code, 2)
        self.assertIn("does not exist", err)

    def test_no_paths_and_bad_options_are_usage_errors(self) -> None:
        self.assertEqual(self.run_main("--db", str(self.db))[0], 2)
        self.assertEqual(self.run_main("--bogus")[0], 2)

    def test_default_database_comes_from_the_environment(self) -> None:
        self.patch(command.os, "environ", {"ESHU_MCP_DB": str(self.db)})
        code, _, _ = self.run_main(str(self.repo), "--json")
        self.assertEqual(code, 0)
        self.assertTrue(self.db.exists())


class ProgressTests(SynchronousTestCase):
    def test_bar_shows_counts_rate_and_eta(self) -> None:
        self.assertEqual(
            render_bar(50, 100, 25.0),
            "[" + "#" * 14 + "-" * 14 + "] 50/100 files  25.0 files/s  ETA 2.0s",
        )

    def test_terminal_progress_ends_the_bar_before_notes(self) -> None:
        stream = io.StringIO()
        progress = TerminalProgress(stream)
        progress({"phase": "parse", "done": 1, "total": 2, "rate": 1.0})
        progress({"phase": "fresh", "repo_id": "r"})
        self.assertTrue(stream.getvalue().startswith("\r["))
        self.assertIn("\n  up to date", stream.getvalue())


class HostileFilesTests(SynchronousTestCase):
    """One bad file never breaks the repository: it is skipped or capped, and counted."""

    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="eshu-cli-hostile-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.repo = fixture_repository(self.tmp)
        self.db = self.tmp / "index.sqlite"
        with open(os.fsencode(str(self.repo)) + b"/latin-\xe9t\xe9.py", "wb") as handle:
            handle.write(b"def hidden():\n    pass\n")
        with (self.repo / "huge.log.txt").open("wb") as handle:
            handle.write(b"start\n")
            handle.truncate(1 << 30)  # sparse: 1 GB that costs nothing on disk

    def run_main(self, *argv: str) -> tuple[int, str]:
        out = io.StringIO()
        code = command.main(list(argv), stdout=out, stderr=io.StringIO())
        return code, out.getvalue()

    def test_the_repository_indexes_and_status_counts_the_skipped_name(self) -> None:
        code, out = self.run_main("index", str(self.repo), "--db", str(self.db), "--json")
        self.assertEqual(code, 0)
        events = [json.loads(line) for line in out.splitlines()]
        (skipped,) = [e for e in events if e["phase"] == "skipped"]
        self.assertEqual(skipped["undecodable_names"], 1)
        self.assertEqual(skipped["example"], "latin-\\xe9t\\xe9.py")
        self.assertIn("committed", [e["phase"] for e in events])
        code, out = self.run_main("index", "--status", "--db", str(self.db), "--json")
        (repo,) = json.loads(out)["repositories"]
        self.assertEqual(repo["undecodable_names"], 1)
        self.assertGreater(repo["entities"], 0)
        code, text = self.run_main("index", "--status", "--db", str(self.db))
        self.assertIn("1 files skipped: their names are not valid UTF-8", text)
        conn = sqlite3.connect(self.db)
        self.addCleanup(conn.close)
        row = conn.execute(
            "SELECT byte_size, parse_status, content FROM files WHERE relative_path = ?",
            ("huge.log.txt",),
        ).fetchone()
        self.assertEqual(row, (1 << 30, "binary", ""))
