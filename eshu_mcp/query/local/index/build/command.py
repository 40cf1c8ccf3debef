"""
``eshu-mcp index PATH... [--db FILE] [--status] [--forget REPO] [--prune] [--json]``: build or
refresh the embedded index, report what it holds, or remove repositories from it. Also runnable
as ``python -m eshu_mcp.query.local.index.build.command`` (the daemon spawns it that way so parsing
never shares the reactor's process).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from eshu_mcp.query.local.index.build.indexer import UNDECODABLE_KEY, index_repositories
from eshu_mcp.query.local.index.build.lifecycle import (
    ForgottenRepository,
    UnknownRepository,
    directory_missing,
    discard_index,
    forget,
    prune,
)
from eshu_mcp.query.local.index.build.lock import IndexLocked, writer_running
from eshu_mcp.query.local.index.build.progress import JsonLinesProgress, TerminalProgress
from eshu_mcp.query.local.index.build.stopping import RunStopped, stop_on_signals
from eshu_mcp.query.local.index.parse.credentials import SERVE_ENV
from eshu_mcp.query.local.index.store.database import (
    IndexDamaged,
    IndexOutdated,
    IndexUnavailable,
    damaged_message,
    default_db_path,
    is_damage,
    open_reader,
)
from eshu_mcp.query.local.index.store.upgrade import awaiting_rebuild, recorded_repositories

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
    parser.add_argument(
        "--forget", metavar="REPO", help="remove one repository (by repo id, path or name)"
    )
    parser.add_argument(
        "--prune", action="store_true", help="remove repositories whose directory is gone"
    )
    parser.add_argument(
        "--rebuild",
        action="store_true",
        help="delete the index file (even a damaged one) and index its repositories and PATHs",
    )
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.add_argument("--workers", type=int, default=None, help="parser processes")
    parser.add_argument(
        "--serve-credential-files",
        action="store_true",
        help="keep credential files (.env*, private keys, configs with literal passwords,"
        " secrets or tokens) as text, served and searched like any file: only on a trusted"
        " single-user setup",
    )
    return parser


def main(argv: list[str], *, stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    """
    Run the index command; returns the process exit status: 0, 1 (a repository failed),
    2 (usage or database problem), 130 (stopped by SIGINT), 143 (stopped by SIGTERM).
    """
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    try:
        with stop_on_signals():
            return _run(argv, out, err)
    except (RunStopped, KeyboardInterrupt) as stop:
        if not isinstance(stop, RunStopped):
            stop = RunStopped(signal.SIGINT)
        err.write(f"eshu-mcp index: {stopped_message(stop)}\n")
        err.flush()
        return stop.exit_code


def stopped_message(stop: RunStopped) -> str:
    """One line: what a stop left behind (nothing half-written)."""
    text = f"stopped by {stop.name}"
    for path, seq, serving in stop.abandoned:
        text += f"; generation {seq} of {path} was not committed (marked interrupted)"
        text += (
            ", the previous generation keeps serving"
            if serving
            else ", it had no earlier generation to serve"
        )
    return text


def _run(argv: list[str], out: TextIO, err: TextIO) -> int:
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
    if options.forget is not None or options.prune:
        if options.paths:
            err.write("eshu-mcp index: --forget and --prune take no PATH\n")
            return EXIT_USAGE
        return _remove(db, options.forget, options.prune, options.json, out, err)
    if not options.paths and not options.rebuild:
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
    paths = list(options.paths)
    if options.rebuild:
        try:
            recorded = discard_index(db)
        except (IndexLocked, OSError) as e:
            err.write(f"eshu-mcp index: cannot rebuild {str(db)!r}: {e}\n")
            return EXIT_USAGE
        paths = _merge_paths(paths, [path for path in recorded if os.path.isdir(path)])
        err.write(f"eshu-mcp index: deleted {db}; indexing {len(paths)} repositories again\n")
        if not paths:
            err.write(
                "eshu-mcp index: the old index named no repository that still exists:"
                " give their PATHs\n"
            )
            return EXIT_USAGE
    use_bar = not options.json and err.isatty()
    progress = TerminalProgress(err) if use_bar else JsonLinesProgress(out)
    try:
        with _credential_files_served(options.serve_credential_files):
            report = index_repositories(db, paths, progress=progress, workers=options.workers)
    except IndexLocked as e:
        err.write(f"eshu-mcp index: {e}\n")
        return EXIT_USAGE
    except (sqlite3.DatabaseError, IndexUnavailable, OSError) as e:
        err.write(f"eshu-mcp index: {_database_problem(db, e)}\n")
        return EXIT_USAGE
    if use_bar:
        for repo in report.repositories:
            out.write(
                f"{repo.status:8} {repo.repo_id or '-'} {repo.path}"
                f" ({len(repo.reparsed)} parsed, {len(repo.deleted)} deleted,"
                f" {repo.seconds:.2f}s)\n"
            )
            if repo.error:
                out.write(f"         error: {repo.error}\n")
    return EXIT_OK if report.ok else EXIT_FAILED


def _merge_paths(given: list[str], recorded: list[str]) -> list[str]:
    """The given paths, then the recorded ones not among them (compared as real paths)."""
    seen = {os.path.realpath(os.path.expanduser(path)) for path in given}
    merged = list(given)
    for path in recorded:
        if os.path.realpath(path) not in seen:
            seen.add(os.path.realpath(path))
            merged.append(path)
    return merged


def _database_problem(db: Path, error: BaseException) -> str:
    """One line for a database that cannot be used: the fix when the file is corrupt."""
    if isinstance(error, sqlite3.DatabaseError) and is_damage(error):
        return damaged_message(db, error)
    if isinstance(error, IndexDamaged):
        return str(error)
    return f"cannot use database {str(db)!r}: {error}"


def _remove(
    db: Path, selector: str | None, pruning: bool, as_json: bool, out: TextIO, err: TextIO
) -> int:
    """``--forget REPO`` and/or ``--prune``: remove repositories and say what went."""
    if not db.is_file():
        err.write(f"eshu-mcp index: index database {str(db)!r} does not exist\n")
        return EXIT_USAGE
    removed: list[ForgottenRepository] = []
    try:
        if selector is not None:
            removed.append(forget(db, selector))
        if pruning:
            removed.extend(prune(db))
    except (UnknownRepository, IndexLocked) as e:
        err.write(f"eshu-mcp index: {e}\n")
        return EXIT_USAGE
    except (sqlite3.DatabaseError, IndexUnavailable, OSError) as e:
        err.write(f"eshu-mcp index: {_database_problem(db, e)}\n")
        return EXIT_USAGE
    if as_json:
        forgotten = [repo.as_dict() for repo in removed]
        out.write(json.dumps({"db": str(db), "forgotten": forgotten}, sort_keys=True) + "\n")
        return EXIT_OK
    for repo in removed:
        out.write(
            f"forgot {repo.repo_id} {repo.local_path} ({repo.files} files,"
            f" {repo.entities} entities, {repo.edges} edges, {repo.generations} generations)\n"
        )
    if not removed:
        out.write("no repository has a missing directory; nothing to prune\n")
    return EXIT_OK


def _status(db: Path, as_json: bool, out: TextIO, err: TextIO) -> int:
    try:
        conn = open_reader(db)
    except IndexOutdated as e:
        return _outdated_status(db, e, as_json, out)
    except IndexUnavailable as e:
        err.write(f"eshu-mcp index: {e}\n")
        return EXIT_USAGE
    try:
        status = collect_status(conn, writer_alive=writer_running(db))
    except sqlite3.DatabaseError as e:
        err.write(f"eshu-mcp index: {_database_problem(db, e)}\n")
        return EXIT_USAGE
    finally:
        conn.close()
    if as_json:
        out.write(json.dumps({"db": str(db), **status}, sort_keys=True) + "\n")
        return EXIT_OK
    out.write(f"index {db}\n")
    for repo in status["repositories"]:
        header = f"{repo['repo_id']}  {repo['local_path']}"
        if repo["missing"]:
            header += (
                "  MISSING: the directory is gone"
                f" (eshu-mcp index --forget {repo['repo_id']}, or --prune)"
            )
        out.write(
            f"{header}\n"
            f"  generation {repo['active_seq'] or '-'} ({repo['freshness_hint'] or 'none'}),"
            f" last indexed {repo['last_indexed_at'] or 'never'}\n"
            f"  {repo['files']} files, {repo['entities']} entities, {repo['edges']} edges,"
            f" {repo['secret_candidates']} secret candidates\n"
            f"  generations: {', '.join(f'{k} {v}' for k, v in repo['generations'].items())}\n"
        )
        if repo["undecodable_names"]:
            out.write(
                f"  {repo['undecodable_names']} files skipped: their names are not valid UTF-8\n"
            )
    for path in status["awaiting_rebuild"]:
        out.write(f"{path}\n  awaiting its rebuild after an eshu-mcp upgrade\n")
    if not status["repositories"] and not status["awaiting_rebuild"]:
        out.write("no repositories indexed\n")
    return EXIT_OK


def _outdated_status(db: Path, error: IndexOutdated, as_json: bool, out: TextIO) -> int:
    """``--status`` of an index an older eshu-mcp wrote: its repositories, and the fix."""
    repositories = [
        {
            "repo_id": row.get("repo_id"),
            "name": row.get("name"),
            "local_path": row["local_path"],
            "missing": directory_missing(str(row["local_path"])),
        }
        for row in recorded_repositories(db)
    ]
    if as_json:
        document = {
            "db": str(db),
            "outdated": str(error),
            "repositories": repositories,
            "count": len(repositories),
        }
        out.write(json.dumps(document, sort_keys=True) + "\n")
        return EXIT_OK
    out.write(f"index {db}\n  {error}\n")
    for repo in repositories:
        missing = "  MISSING: the directory is gone" if repo["missing"] else ""
        out.write(f"{repo['repo_id'] or '-'}  {repo['local_path']}{missing}\n")
    return EXIT_OK


def collect_status(conn: sqlite3.Connection, *, writer_alive: bool = True) -> dict:
    """
    Repositories, their generations by status, and row counts, for ``--status``.

    Without a live writer, 'pending' generations were left by a run that died: they are
    counted as 'interrupted' (the next run marks them failed).
    """
    repositories = []
    for repo in conn.execute("SELECT * FROM repositories ORDER BY local_path"):
        repo_id = repo["repo_id"]
        active = conn.execute(
            "SELECT seq, freshness_hint FROM generations WHERE generation_id = ?",
            (repo["active_generation_id"],),
        ).fetchone()
        generations: dict[str, int] = {}
        for state, failure, n in conn.execute(
            "SELECT status, failure_class, COUNT(*) FROM generations WHERE repo_id = ?"
            " GROUP BY status, failure_class ORDER BY status",
            (repo_id,),
        ):
            if (state == "pending" and not writer_alive) or failure == "interrupted":
                state = "interrupted"
            generations[state] = generations.get(state, 0) + n

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
                "missing": directory_missing(repo["local_path"]),
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
                "undecodable_names": _undecodable_names(conn, repo_id),
            }
        )
    return {
        "repositories": repositories,
        "count": len(repositories),
        "awaiting_rebuild": awaiting_rebuild(conn),
    }


@contextlib.contextmanager
def _credential_files_served(serve: bool) -> Iterator[None]:
    """For the run: credential files kept as text when asked (parser workers inherit it)."""
    if not serve:
        yield
        return
    previous = os.environ.get(SERVE_ENV)
    os.environ[SERVE_ENV] = "1"
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(SERVE_ENV, None)
        else:
            os.environ[SERVE_ENV] = previous


def _undecodable_names(conn: sqlite3.Connection, repo_id: str) -> int:
    """Files the last walk skipped because their names are not valid UTF-8."""
    row = conn.execute(
        "SELECT value FROM meta WHERE key = ?", (UNDECODABLE_KEY.format(repo_id=repo_id),)
    ).fetchone()
    return int(row[0]) if row is not None else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
