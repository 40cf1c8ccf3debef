"""Tests for eshu_mcp.query.local.index.resolve.inputs: what resolution reads of each file."""

import shutil
import subprocess
import tempfile
from pathlib import Path

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.build.indexer import index_repositories
from eshu_mcp.query.local.index.resolve.inputs import signature_with_return
from eshu_mcp.query.local.index.store.database import open_reader


class SignatureTests(SynchronousTestCase):
    def test_a_read_result_is_added_and_a_parameter_named_returns_is_not_one(self) -> None:
        self.assertEqual(
            signature_with_return("def __enter__(self)", '{"returns": "self"}'),
            "def __enter__(self) -> self",
        )
        self.assertEqual(
            signature_with_return("def typed(values, returns)", '{"args": ["values", "returns"]}'),
            "def typed(values, returns)",
        )

    def test_a_repository_with_a_parameter_named_returns_indexes(self) -> None:
        tmp = Path(tempfile.mkdtemp(prefix="eshu-inputs-"))
        self.addCleanup(shutil.rmtree, tmp, True)
        repo = tmp / "repo"
        repo.mkdir()
        (repo / "types.py").write_text(
            "def typed(values, returns) -> None:\n    helper(returns)\n\n"
            "def helper(x):\n    return x\n"
        )
        for args in (("init", "-q", "-b", "main"), ("add", "-A"), ("commit", "-q", "-m", "f")):
            subprocess.run(
                ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
                cwd=repo,
                check=True,
                capture_output=True,
            )
        db = tmp / "index.sqlite"
        self.assertTrue(index_repositories(db, [repo], workers=1).ok)
        conn = open_reader(db)
        self.addCleanup(conn.close)
        edges = conn.execute(
            "SELECT s.qualified_name, t.qualified_name FROM edges e"
            " JOIN entities s ON s.entity_id = e.source_id"
            " JOIN entities t ON t.entity_id = e.target_id WHERE e.type = 'CALLS'"
        ).fetchall()
        self.assertEqual([tuple(row) for row in edges], [("typed", "helper")])
