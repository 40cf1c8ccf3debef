"""A newer eshu-mcp meeting an index an older one wrote: every recorded repository survives."""

from __future__ import annotations

import io
import json
import shutil
import sqlite3
import tempfile
from pathlib import Path

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.build import command
from eshu_mcp.query.local.index.build.indexer import index_repositories
from eshu_mcp.query.local.index.parse.extractors import EXTRACTOR_VERSION
from eshu_mcp.query.local.index.store.database import SCHEMA_VERSION
from tests.test_index_lifecycle import small_repository


class UpgradeTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="eshu-upgrade-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.alpha = small_repository(self.tmp, "alpha")
        self.beta = small_repository(self.tmp, "beta")
        self.db = self.tmp / "index.sqlite"
        self.assertTrue(index_repositories(self.db, [self.alpha, self.beta], workers=1).ok)

    def written_by_an_older_eshu_mcp(self, **meta: str) -> None:
        conn = sqlite3.connect(self.db)
        with conn:
            for key, value in meta.items():
                conn.execute("UPDATE meta SET value = ? WHERE key = ?", (value, key))
        conn.close()

    def run_main(self, *argv: str) -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        code = command.main([*argv, "--db", str(self.db)], stdout=out, stderr=err)
        return code, out.getvalue(), err.getvalue()

    def status(self) -> dict:
        code, out, err = self.run_main("--status", "--json")
        self.assertEqual((code, err), (0, ""))
        return json.loads(out)

    def entities_of(self, name: str) -> int:
        conn = sqlite3.connect(self.db)
        try:
            return conn.execute(
                "SELECT COUNT(*) FROM entities e JOIN repositories r ON r.repo_id = e.repo_id"
                " WHERE r.name = ?",
                (name,),
            ).fetchone()[0]
        finally:
            conn.close()

    def test_status_of_an_older_schema_lists_every_repository_and_the_fix(self) -> None:
        self.written_by_an_older_eshu_mcp(schema_version=str(SCHEMA_VERSION - 1))
        status = self.status()
        self.assertEqual([r["name"] for r in status["repositories"]], ["alpha", "beta"])
        self.assertIn(f"schema version {SCHEMA_VERSION - 1}", status["outdated"])
        self.assertIn("rebuild all of them", status["outdated"])
        code, out, _ = self.run_main("--status")
        self.assertEqual(code, 0)
        self.assertIn(str(self.beta), out)

    def test_indexing_one_path_after_a_schema_change_rebuilds_every_repository(self) -> None:
        before = self.entities_of("beta")
        self.written_by_an_older_eshu_mcp(schema_version=str(SCHEMA_VERSION - 1))
        code, out, _ = self.run_main(str(self.alpha), "--json")
        self.assertEqual(code, 0)
        events = [json.loads(line) for line in out.splitlines()]
        (upgrade,) = [e for e in events if e["phase"] == "upgrade"]
        self.assertEqual((upgrade["reason"], upgrade["paths"]), ("schema", [str(self.beta)]))
        status = self.status()
        self.assertEqual(
            [(r["name"], r["active_seq"]) for r in status["repositories"]],
            [("alpha", 1), ("beta", 1)],
        )
        self.assertEqual(status["awaiting_rebuild"], [])
        self.assertEqual(self.entities_of("beta"), before)

    def test_a_recorded_repository_whose_directory_is_gone_is_not_owed_a_rebuild(self) -> None:
        self.written_by_an_older_eshu_mcp(schema_version=str(SCHEMA_VERSION - 1))
        shutil.move(self.beta, self.tmp / "away")
        self.run_main(str(self.alpha), "--json")
        status = self.status()
        self.assertEqual([r["name"] for r in status["repositories"]], ["alpha"])
        self.assertEqual(status["awaiting_rebuild"], [])  # a vanished tree is not owed

    def test_rebuild_option_reads_the_repositories_of_an_older_schema(self) -> None:
        self.written_by_an_older_eshu_mcp(schema_version=str(SCHEMA_VERSION - 1))
        code, _, err = self.run_main("--rebuild", "--json")
        self.assertEqual(code, 0)
        self.assertIn("indexing 2 repositories again", err)
        self.assertEqual([r["name"] for r in self.status()["repositories"]], ["alpha", "beta"])

    def test_an_extractor_change_re_extracts_every_repository_not_only_the_one_named(self):
        conn = sqlite3.connect(self.db)
        with conn:
            conn.execute("UPDATE meta SET value = 'older' WHERE key LIKE 'extractor_version%'")
        conn.close()
        code, out, _ = self.run_main(str(self.alpha), "--json")
        self.assertEqual(code, 0)
        events = [json.loads(line) for line in out.splitlines()]
        (upgrade,) = [e for e in events if e["phase"] == "upgrade"]
        self.assertEqual(upgrade["reason"], "extractor")
        self.assertEqual(
            [(r["name"], r["active_seq"]) for r in self.status()["repositories"]],
            [("alpha", 2), ("beta", 2)],
        )
        conn = sqlite3.connect(self.db)
        versions = {
            row[0] for row in conn.execute("SELECT value FROM meta WHERE key LIKE 'extractor%'")
        }
        conn.close()
        self.assertEqual(versions, {EXTRACTOR_VERSION})
        code, out, _ = self.run_main(str(self.alpha), "--json")
        self.assertNotIn('"upgrade"', out)  # settled: nothing owed any more
