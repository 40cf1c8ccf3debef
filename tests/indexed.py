"""
A small repository a test writes, commits and indexes from scratch, for tests that read
what the index made of it.
"""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
from pathlib import Path

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.build.indexer import index_repositories
from eshu_mcp.query.local.index.store.database import open_reader
from tests.test_index_indexer import git


def index_files(case: SynchronousTestCase, files: dict[str, str]) -> tuple[Path, Path]:
    """A git repository of ``files`` (path -> text), committed and indexed; (repository,
    index path), both removed after the test."""
    tmp = Path(tempfile.mkdtemp(prefix="eshu-indexed-"))
    case.addCleanup(shutil.rmtree, tmp, True)
    repo = tmp / "repo"
    repo.mkdir()
    for path, text in files.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "fixture")
    db = tmp / "index.sqlite"
    case.assertTrue(index_repositories(db, [repo], workers=1).ok)
    return repo, db


def indexed_reader(case: SynchronousTestCase, files: dict[str, str]) -> sqlite3.Connection:
    """A reader on the index of ``files`` (see :func:`index_files`), closed after the test."""
    _, db = index_files(case, files)
    conn = open_reader(db)
    case.addCleanup(conn.close)
    return conn
