"""A corrupt index file: one clear message naming the file and the fix, everywhere."""

from __future__ import annotations

import io
import json
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path
from types import SimpleNamespace

from twisted.trial.unittest import SynchronousTestCase
from twisted.web.test.requesthelper import DummyRequest

from eshu_mcp.query.local.backend import LocalQueryBackend
from eshu_mcp.query.local.index.build import command
from eshu_mcp.query.local.index.build.indexer import index_repositories
from eshu_mcp.transport.web import McpWebApp
from tests.test_api_resource import ApiClient, InlinePool, ThreadReactor
from tests.test_index_lifecycle import ROOT, small_repository

PAGE = 4096


def many_modules(parent: Path, count: int) -> Path:
    """A repository big enough that its index spans many pages."""
    root = parent / "wide"
    root.mkdir()
    for n in range(count):
        body = "".join(f"def handler_{n}_{k}(x):\n    return x + {k}\n\n" for k in range(20))
        (root / f"mod_{n}.py").write_text(body)
    return root


def settle(db: Path) -> None:
    """Fold the write-ahead log into the main file, so page damage is what readers see."""
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


class DamagedIndexCase(SynchronousTestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="eshu-damage-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.repo = small_repository(self.tmp, "alpha")
        self.db = self.tmp / "index.sqlite"
        index_repositories(self.db, [self.repo], workers=1)
        settle(self.db)
        with open(self.db, "r+b") as handle:  # the first page: header and schema root
            handle.write(b"\xde\xad\xbe\xef" * (PAGE // 4))

    def assert_names_file_and_fix(self, text: str) -> None:
        self.assertIn(f"index database {self.db} is damaged", text)
        self.assertIn(f"rebuild it with `eshu-mcp index --rebuild --db {self.db} PATH...`", text)
        self.assertNotIn("internal error", text)


class FirstPageOverwrittenTests(DamagedIndexCase):
    def run_main(self, *argv: str) -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        code = command.main([*argv, "--db", str(self.db)], stdout=out, stderr=err)
        return code, out.getvalue(), err.getvalue()

    def test_the_index_command_says_so_in_one_line(self) -> None:
        for argv in (["--status"], [str(self.repo)], ["--prune"], ["--forget", "alpha"]):
            code, out, err = self.run_main(*argv)
            self.assertEqual((code, out, err.count("\n")), (2, "", 1), argv)
            self.assert_names_file_and_fix(err)

    def test_rebuild_replaces_the_damaged_file_from_the_given_paths(self) -> None:
        code, _, err = self.run_main("--rebuild")
        self.assertEqual(code, 2)
        self.assertIn("give their PATHs", err)
        self.assertFalse(self.db.exists())
        code, _, err = self.run_main("--rebuild", str(self.repo), "--json")
        self.assertEqual(code, 0, err)
        response = ApiClient(self, str(self.db)).get("/repositories")
        self.assertEqual([r["name"] for r in response.json()["repositories"]], ["alpha"])

    def test_tools_get_the_message_not_internal_error(self) -> None:
        response = ApiClient(self, str(self.db)).get("/repositories", envelope=True)
        self.assertEqual(response.status, 503)
        error = response.json()["error"]
        self.assertEqual(error["code"], "backend_unavailable")
        self.assert_names_file_and_fix(error["message"])

    def test_eshu_mcp_call_prints_it_as_the_tool_error(self) -> None:
        argv = ["call", "--db", str(self.db), "list_indexed_repositories", "{}"]
        done = subprocess.run(
            [sys.executable, "-m", "eshu_mcp.cli", *argv],
            capture_output=True,
            timeout=120,
            env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(self.tmp)},
        )
        result = json.loads(done.stdout)
        self.assertTrue(result["isError"])
        self.assert_names_file_and_fix(result["content"][0]["text"])

    def test_readyz_names_the_file_and_the_fix(self) -> None:
        backend = LocalQueryBackend(str(self.db), reactor=ThreadReactor(), threadpool=InlinePool())
        request = DummyRequest([b"readyz"])
        body = self.successResultOf(
            McpWebApp.readyz(SimpleNamespace(backend=backend), request)
        ).decode()
        self.assertEqual(request.responseCode, 503)
        self.assertTrue(body.startswith("service=mcp-server probe=readyz status=error error="))
        self.assert_names_file_and_fix(body)


class InteriorPageDamageTests(SynchronousTestCase):
    def test_a_malformed_page_met_by_a_query_is_reported_not_internal_error(self) -> None:
        tmp = Path(tempfile.mkdtemp(prefix="eshu-damage-"))
        self.addCleanup(shutil.rmtree, tmp, True)
        db = tmp / "index.sqlite"
        index_repositories(db, [many_modules(tmp, 40)], workers=1)
        settle(db)
        client = ApiClient(self, str(db))
        self.assertEqual(client.get("/repositories").status, 200)  # a cached reader exists
        size = db.stat().st_size
        with open(db, "r+b") as handle:  # every page but the first
            handle.seek(PAGE)
            handle.write(b"\xde\xad\xbe\xef" * ((size - PAGE) // 4))
        response = client.post(
            "/content/files/search", {"query": "handler_7_3", "limit": 5}, envelope=True
        )
        self.assertEqual(response.status, 503)
        message = response.json()["error"]["message"]
        self.assertIn(f"index database {db} is damaged", message)
        self.assertIn("eshu-mcp index --rebuild", message)
