"""Tests for ``eshu-mcp index --forget`` and ``--prune``, and missing directories in --status."""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.api.platform.status import index_health
from eshu_mcp.query.local.api.platform.truth import index_freshness
from eshu_mcp.query.local.index.build import command
from eshu_mcp.query.local.index.build.indexer import HOLD_ENV, index_repositories
from eshu_mcp.query.local.index.build.lock import writer_running
from eshu_mcp.query.local.index.store.database import open_reader

ROOT = Path(__file__).resolve().parent.parent


def small_repository(parent: Path, name: str) -> Path:
    """A plain directory with two Python modules that call and import each other."""
    root = parent / name
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "core.py").write_text(
        f"class {name.title()}Store:\n"
        "    def save(self, item):\n"
        "        return validate(item)\n\n\n"
        "def validate(item):\n"
        "    return bool(item)\n"
    )
    (root / "pkg" / "cli.py").write_text(
        f"from pkg.core import {name.title()}Store, validate\n\n\n"
        "def main():\n"
        f"    {name.title()}Store().save(1)\n"
        "    return validate(2)\n"
    )
    return root


def table_counts(db: Path) -> dict[str, int]:
    """Rows of every storage table (FTS shadow tables and meta aside)."""
    conn = sqlite3.connect(db)
    try:
        names = [
            row[0]
            for row in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'"
                " AND name NOT LIKE 'files_fts%' AND name NOT LIKE 'search_fts%'"
                " AND name NOT LIKE 'sqlite_%' AND name != 'meta'"
            )
        ]
        counts = {
            name: conn.execute(f'SELECT COUNT(*) FROM "{name}"').fetchone()[0] for name in names
        }
        counts["files_fts matches"] = conn.execute(
            "SELECT COUNT(*) FROM files_fts WHERE files_fts MATCH 'validate'"
        ).fetchone()[0]
        counts["search_fts matches"] = conn.execute(
            "SELECT COUNT(*) FROM search_fts WHERE search_fts MATCH 'validate'"
        ).fetchone()[0]
        counts["search_fts documents"] = conn.execute(
            "SELECT COUNT(*) FROM search_fts_docsize"
        ).fetchone()[0]
        return counts
    finally:
        conn.close()


class ForgetAndPruneTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="eshu-lifecycle-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.alpha = small_repository(self.tmp, "alpha")
        self.beta = small_repository(self.tmp, "beta")
        self.db = self.tmp / "index.sqlite"
        report = index_repositories(self.db, [self.alpha, self.beta], workers=1)
        self.assertTrue(report.ok)
        self.alpha_id = report.repositories[0].repo_id

    def run_main(self, *argv: str) -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        code = command.main(["index", *argv, "--db", str(self.db)], stdout=out, stderr=err)
        return code, out.getvalue(), err.getvalue()

    def status(self) -> dict:
        code, out, _ = self.run_main("--status", "--json")
        self.assertEqual(code, 0)
        return json.loads(out)

    def beta_only_counts(self) -> dict[str, int]:
        """The table counts of an index that only ever held beta."""
        alone = self.tmp / "beta-only.sqlite"
        index_repositories(alone, [self.beta], workers=1)
        return table_counts(alone)

    def test_forget_by_name_removes_every_row_of_the_repository_and_says_what(self) -> None:
        code, out, err = self.run_main("--forget", "alpha")
        self.assertEqual((code, err), (0, ""))
        self.assertIn(f"forgot {self.alpha_id} {self.alpha}", out)
        self.assertRegex(out, r"\(3 files, [1-9]\d* entities, [1-9]\d* edges, 1 generations\)")
        self.assertEqual(table_counts(self.db), self.beta_only_counts())
        conn = sqlite3.connect(self.db)
        self.addCleanup(conn.close)
        self.assertEqual(conn.execute("PRAGMA integrity_check").fetchone()[0], "ok")
        self.assertEqual(conn.execute("PRAGMA foreign_key_check").fetchall(), [])
        self.assertEqual([repo["name"] for repo in self.status()["repositories"]], ["beta"])

    def test_forget_by_path_or_id_with_json_output(self) -> None:
        code, out, _ = self.run_main("--forget", str(self.alpha), "--json")
        self.assertEqual(code, 0)
        (gone,) = json.loads(out)["forgotten"]
        self.assertEqual((gone["repo_id"], gone["files"]), (self.alpha_id, 3))
        beta_id = self.status()["repositories"][0]["repo_id"]
        self.assertEqual(self.run_main("--forget", beta_id)[0], 0)
        self.assertEqual(self.status()["repositories"], [])

    def test_forgetting_an_unknown_repository_is_a_one_line_usage_error(self) -> None:
        code, out, err = self.run_main("--forget", "gamma")
        self.assertEqual((code, out), (2, ""))
        self.assertEqual(err, "eshu-mcp index: no indexed repository matches 'gamma'\n")
        self.assertEqual(len(self.status()["repositories"]), 2)

    def test_a_name_shared_by_two_repositories_must_be_given_by_path(self) -> None:
        twin = small_repository(self.tmp / "elsewhere", "alpha")
        index_repositories(self.db, [twin], workers=1)
        code, _, err = self.run_main("--forget", "alpha")
        self.assertEqual(code, 2)
        self.assertIn("names 2 repositories", err)
        self.assertEqual(self.run_main("--forget", str(twin))[0], 0)
        self.assertEqual(len(self.status()["repositories"]), 2)

    def test_status_flags_a_deleted_directory_and_prune_forgets_it(self) -> None:
        shutil.rmtree(self.alpha)
        repos = {repo["name"]: repo for repo in self.status()["repositories"]}
        self.assertEqual((repos["alpha"]["missing"], repos["beta"]["missing"]), (True, False))
        _, text, _ = self.run_main("--status")
        self.assertIn(f"{self.alpha}  MISSING: the directory is gone", text)
        code, out, _ = self.run_main("--prune")
        self.assertEqual(code, 0)
        self.assertTrue(out.startswith(f"forgot {self.alpha_id} {self.alpha} (3 files"))
        self.assertEqual([repo["name"] for repo in self.status()["repositories"]], ["beta"])
        code, out, _ = self.run_main("--prune")
        self.assertEqual(
            (code, out), (0, "no repository has a missing directory; nothing to prune\n")
        )

    def test_rebuild_indexes_the_recorded_repositories_into_a_new_file(self) -> None:
        old = sqlite3.connect(self.db)  # a mark that only the old file carries
        old.execute("INSERT INTO meta (key, value) VALUES ('old-file', '1')")
        old.commit()
        old.close()
        code, _, err = self.run_main("--rebuild", "--json")
        self.assertEqual(code, 0, err)
        self.assertIn("indexing 2 repositories again", err)
        conn = sqlite3.connect(self.db)
        self.addCleanup(conn.close)
        self.assertIsNone(conn.execute("SELECT 1 FROM meta WHERE key = 'old-file'").fetchone())
        repos = self.status()["repositories"]
        self.assertEqual([(r["name"], r["active_seq"]) for r in repos], [("alpha", 1), ("beta", 1)])

    def test_forget_and_prune_take_no_paths(self) -> None:
        code, _, err = self.run_main("--prune", str(self.beta))
        self.assertEqual(code, 2)
        self.assertIn("take no PATH", err)


class AbandonedGenerationTests(SynchronousTestCase):
    def start_held_run(self, db: Path, repo: Path, release: Path) -> subprocess.Popen:
        """An indexer child that commits its 'pending' generation, then waits for ``release``."""
        env = dict(os.environ, PYTHONPATH=str(ROOT), **{HOLD_ENV: str(release)})
        argv = [str(repo), "--db", str(db), "--json", "--workers", "1"]
        child = subprocess.Popen(
            [sys.executable, "-m", "eshu_mcp.query.local.index.build.command", *argv],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        self.addCleanup(child.stdout.close)
        phases = []
        for _ in range(50):  # bounded: a dozen progress lines come before the hold
            line = child.stdout.readline()
            if not line:
                break
            phases.append(json.loads(line)["phase"])
            if phases[-1] == "holding":
                break
        self.assertEqual(phases[-1], "holding", phases)
        return child

    def test_a_killed_runs_pending_generation_stops_saying_building(self) -> None:
        tmp = Path(tempfile.mkdtemp(prefix="eshu-abandoned-"))
        self.addCleanup(shutil.rmtree, tmp, True)
        repo = small_repository(tmp, "alpha")
        db = tmp / "index.sqlite"
        index_repositories(db, [repo], workers=1)
        (repo / "pkg" / "extra.py").write_text("def extra():\n    return 1\n")
        child = self.start_held_run(db, repo, tmp / "never")
        conn = open_reader(db)
        self.addCleanup(conn.close)
        self.assertTrue(writer_running(db))
        self.assertEqual(index_freshness(conn)["state"], "building")
        self.assertEqual(index_health(conn).state, "progressing")

        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
        self.assertFalse(writer_running(db))
        freshness = index_freshness(conn)  # extra.py is in the tree, not in the index
        self.assertEqual((freshness["state"], freshness["changed_paths"]), ("stale", 1))
        health = index_health(conn)
        self.assertEqual((health.state, health.queue["outstanding"]), ("healthy", 0))
        self.assertEqual(health.queue["failed"], 1)
        out = io.StringIO()
        command.main(["--status", "--db", str(db), "--json"], stdout=out, stderr=io.StringIO())
        (status,) = json.loads(out.getvalue())["repositories"]
        self.assertEqual(status["generations"], {"active": 1, "interrupted": 1})
