"""
``eshu-mcp index PATH... [--db FILE] [--status] [--json]``: build or refresh the embedded
index, or report what it holds. Also runnable as ``python -m eshu_mcp.query.local.index.command``
(the daemon spawns it that way so parsing never shares the reactor's process).
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
from pathlib import Path
from typing import TextIO

from .indexer import index_repositories
from .lock import IndexLocked
from .progress import JsonLinesProgress, TerminalProgress
from .store import IndexUnavailable, default_db_path, open_reader

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2, like every other error here
        """Report a usage error as an exception, so main() prints one line and returns 2."""
        raise _UsageError(message)


class _UsageError(Exception):
    pass


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="eshu-mcp index", description="Build or refresh the embedded index.")
    parser.add_argument("paths", nargs="*", metavar="PATH", help="repository work trees")
    parser.add_argument("--db", help="index file (default $ESHU_MCP_DB or ~/.eshu/eshu-mcp.sqlite)")
    parser.add_argument("--status", action="store_true", help="report what the index holds")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.add_argument("--workers", type=int, default=None, help="parser processes")
    return parser


def main(argv: list[str], *, stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    """Run the index command; returns the process exit status."""
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    if argv[:1] == ["index"] and not os.path.isdir("index"):
        argv = argv[1:]
    try:
        options = _parser().parse_args(argv)
    except _UsageError as e:
        err.write(f"eshu-mcp index: {e}\n")
        return EXIT_USAGE
    db = Path(options.db).expanduser() if options.db else default_db_path()
    if options.status:
        return _status(db, options.json, out, err)
    if not options.paths:
        err.write("eshu-mcp index: give at least one PATH to index (or --status)\n")
        return EXIT_USAGE
    for path in options.paths:
        candidate = Path(path).expanduser()
        if not candidate.exists():
            err.write(f"eshu-mcp index: path {path!r} does not exist\n")
            return EXIT_USAGE
        if not candidate.is_dir():
            err.write(f"eshu-mcp index: path {path!r} is not a directory\n")
            return EXIT_USAGE
    if db.exists() and not os.access(db, os.R_OK | os.W_OK):
        err.write(f"eshu-mcp index: database {str(db)!r} is not readable and writable\n")
        return EXIT_USAGE
    use_bar = not options.json and err.isatty()
    progress = TerminalProgress(err) if use_bar else JsonLinesProgress(out)
    try:
        report = index_repositories(db, options.paths, progress=progress, workers=options.workers)
    except IndexLocked as e:
        err.write(f"eshu-mcp index: {e}\n")
        return EXIT_USAGE
    except (sqlite3.DatabaseError, IndexUnavailable, OSError) as e:
        err.write(f"eshu-mcp index: cannot use database {str(db)!r}: {e}\n")
        return EXIT_USAGE
    if use_bar:
        for repo in report.repositories:
            out.write(
                f"{repo.status:8} {repo.repo_id or '-'} {repo.path}"
                f" ({len(repo.reparsed)} parsed, {len(repo.deleted)} deleted,"
                f" {report.seconds:.2f}s)\n"
            )
            if repo.error:
                out.write(f"         error: {repo.error}\n")
    return EXIT_OK if report.ok else EXIT_FAILED


def _status(db: Path, as_json: bool, out: TextIO, err: TextIO) -> int:
    try:
        conn = open_reader(db)
    except IndexUnavailable as e:
        err.write(f"eshu-mcp index: {e}\n")
        return EXIT_USAGE
    try:
        status = collect_status(conn)
    except sqlite3.DatabaseError as e:
        err.write(f"eshu-mcp index: cannot read database {str(db)!r}: {e}\n")
        return EXIT_USAGE
    finally:
        conn.close()
    if as_json:
        out.write(json.dumps({"db": str(db), **status}, sort_keys=True) + "\n")
        return EXIT_OK
    out.write(f"index {db}\n")
    for repo in status["repositories"]:
        out.write(
            f"{repo['repo_id']}  {repo['local_path']}\n"
            f"  generation {repo['active_seq'] or '-'} ({repo['freshness_hint'] or 'none'}),"
            f" last indexed {repo['last_indexed_at'] or 'never'}\n"
            f"  {repo['files']} files, {repo['entities']} entities, {repo['edges']} edges,"
            f" {repo['secret_candidates']} secret candidates\n"
            f"  generations: {', '.join(f'{k} {v}' for k, v in repo['generations'].items())}\n"
        )
    if not status["repositories"]:
        out.write("no repositories indexed\n")
    return EXIT_OK


def collect_status(conn: sqlite3.Connection) -> dict:
    """Repositories, their generations by status, and row counts, for ``--status``."""
    repositories = []
    for repo in conn.execute("SELECT * FROM repositories ORDER BY local_path"):
        repo_id = repo["repo_id"]
        active = conn.execute(
            "SELECT seq, freshness_hint FROM generations WHERE generation_id = ?",
            (repo["active_generation_id"],),
        ).fetchone()
        generations = {
            row[0]: row[1]
            for row in conn.execute(
                "SELECT status, COUNT(*) FROM generations WHERE repo_id = ? GROUP BY status"
                " ORDER BY status",
                (repo_id,),
            )
        }

        def count(table: str, repo_id: str = repo_id) -> int:
            """Rows of one table for the repository."""
            return conn.execute(
                f"SELECT COUNT(*) FROM {table} WHERE repo_id = ?", (repo_id,)
            ).fetchone()[0]

        repositories.append(
            {
                "repo_id": repo_id,
                "name": repo["name"],
                "local_path": repo["local_path"],
                "remote_url": repo["remote_url"],
                "head_commit": repo["head_commit"],
                "active_generation_id": repo["active_generation_id"],
                "active_seq": active["seq"] if active else None,
                "freshness_hint": active["freshness_hint"] if active else None,
                "last_indexed_at": repo["last_indexed_at"],
                "generations": generations,
                "files": count("files"),
                "entities": count("entities"),
                "edges": count("edges"),
                "secret_candidates": count("secret_candidates"),
            }
        )
    return {"repositories": repositories, "count": len(repositories)}


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
