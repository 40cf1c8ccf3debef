"""
The daemon's long-lived indexer child:
``python -m eshu_mcp.query.local.index.build.builder --db FILE``.

It reads build requests from stdin, one JSON object per line (``{"build": 3, "paths": [...],
"changed": {...}}``), runs each with :func:`index_repositories`, and writes that build's
progress events (tagged with ``"build"``) and then one ``built`` summary line to stdout. It
exits when stdin closes. ``changed`` (the paths the watcher saw, per repository) spares a
one-file change the walk of the whole tree: the indexed files are taken as they are and only
those paths are looked at again (a new file or an ignore file still walks the tree; see
:mod:`.changed_walk`). Staying alive between builds is the point: a one-file
change then costs its build, not an interpreter start and the grammar imports.

It puts itself in a process group of its own first, so the daemon can stop it and any parser
workers it forked with one signal (see :mod:`.builder_process`).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import select
import signal
import sqlite3
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from eshu_mcp.query.local.index.build.lock import IndexLocked
from eshu_mcp.query.local.index.build.progress import JsonLinesProgress, edge_total
from eshu_mcp.query.local.index.store.database import (
    IndexUnavailable,
    damaged_message,
    is_damage,
    open_reader,
)

if TYPE_CHECKING:
    from eshu_mcp.query.local.index.build.indexer import IndexReport

BUILT = "built"
"""The phase of the line that ends a build's output."""
TOTAL_TABLES = ("files", "entities", "edges")
"""What ``eshu-mcp index --status`` counts per repository; the build summary counts the same."""


def repository_totals(
    db_path: str | os.PathLike[str], repo_ids: list[str], edges: dict[str, int] | None = None
) -> dict[str, dict]:
    """Row counts per repository as ``--status`` reports them (files, entities, edges);
    ``edges`` gives the edge totals a build already counted (not counted again), and the
    graph inputs this process keeps give the files and entities (counting a 26k-file
    repository's entities took a third of a second)."""
    if not repo_ids:
        return {}
    from eshu_mcp.query.local.index.resolve import input_cache

    conn = open_reader(db_path)
    try:
        totals = {}
        for repo_id in repo_ids:
            known = dict(input_cache.kept_counts(conn, repo_id) or {})  # files, entities
            if edges and repo_id in edges:
                known["edges"] = edges[repo_id]
            totals[repo_id] = {
                table: known[table]
                if table in known
                else conn.execute(
                    f"SELECT COUNT(*) FROM {table} WHERE repo_id = ?", (repo_id,)
                ).fetchone()[0]
                for table in TOTAL_TABLES
            }
        return totals
    finally:
        conn.close()


def build_summary(report: IndexReport, totals: dict[str, dict]) -> list[dict[str, Any]]:
    """One JSON-ready row per repository of a finished build."""
    rows = []
    for repo in report.repositories:
        row = {
            "path": repo.path,
            "repo_id": repo.repo_id,
            "status": repo.status,
            "parsed": len(repo.reparsed),
            "deleted": len(repo.deleted),
            "seconds": round(repo.seconds, 3),
            "error": repo.error,
        }
        row.update(totals.get(repo.repo_id or "", {}))
        rows.append(row)
    return rows


def run_build(
    db_path: str, request: dict[str, Any], emit: Callable[[dict[str, Any]], None]
) -> dict[str, Any]:
    """Run one build request; returns its ``built`` line (never raises for a failed build)."""
    from eshu_mcp.query.local.index.build.indexer import (
        index_repositories,  # imported after main() has left the parent's group
    )

    started = time.monotonic()
    build = request.get("build")
    paths = [str(path) for path in request.get("paths") or []]
    workers = request.get("workers")
    changed = request.get("changed") if isinstance(request.get("changed"), dict) else None

    def tagged(event: dict[str, Any]) -> None:
        emit({**event, "build": build})

    done: dict[str, Any] = {"phase": BUILT, "build": build, "ok": False, "repositories": []}
    try:
        report = index_repositories(
            db_path, paths, progress=tagged, workers=workers, changed=changed
        )
    except IndexLocked as e:
        done["error"] = str(e)
    except (sqlite3.DatabaseError, IndexUnavailable, OSError) as e:
        damaged = isinstance(e, sqlite3.DatabaseError) and is_damage(e)
        done["error"] = damaged_message(db_path, e) if damaged else f"{type(e).__name__}: {e}"
    except Exception as e:  # one bad build must not end the child: report it and go on
        done["error"] = f"{type(e).__name__}: {e}"
    else:
        built = [r.repo_id for r in report.repositories if r.repo_id and r.status != "failed"]
        try:
            counted = {  # by the build itself: counting the edges view again costs 0.1 s
                r.repo_id: edge_total(r.edges)
                for r in report.repositories
                if r.repo_id and r.status == "indexed" and r.edges
            }
            totals = repository_totals(db_path, built, counted)
        except (sqlite3.Error, IndexUnavailable):
            totals = {}
        done["ok"] = report.ok
        done["repositories"] = build_summary(report, totals)
        failures = [r.error for r in report.repositories if r.error]
        if failures:
            done["error"] = failures[0]
    done["seconds"] = round(time.monotonic() - started, 3)
    return done


def serve(db_path: str, requests: TextIO, out: TextIO) -> int:
    """Answer build requests from ``requests`` until it closes; returns the exit status."""
    from eshu_mcp.query.local.index.resolve import input_cache

    input_cache.keep_between_builds()  # the point of a long-lived child: see input_cache
    progress = JsonLinesProgress(out)
    try:
        for line in requests:
            try:
                request = json.loads(line)
            except ValueError:
                continue
            if not isinstance(request, dict):
                continue
            built = run_build(db_path, request, progress)
            progress(built)
            _keep_inputs(db_path, built)
    finally:
        input_cache.keep_between_builds(False)
    return 0


def _keep_inputs(db_path: str, built: dict[str, Any]) -> None:
    """Between builds: read and keep the graph inputs of the repositories just built that
    are not kept yet, so the next change is patched (see :mod:`..resolve.input_cache`)."""
    from eshu_mcp.query.local.index.build.indexer import collector_paused
    from eshu_mcp.query.local.index.resolve import input_cache
    from eshu_mcp.query.local.index.resolve.graph import warm_inheritance

    repo_ids = [
        repo["repo_id"]
        for repo in built.get("repositories") or []
        if repo.get("repo_id") and repo.get("status") in ("indexed", "fresh")
    ]
    try:
        with collector_paused():  # a million long-lived objects: collections would walk them
            gc.collect()  # what the build left (it ran paused), not to be frozen below
            if input_cache.warm(db_path, repo_ids, warm_inheritance):
                # The kept inputs live until replaced and hold no cycles (dropping them
                # frees them): kept out of every later collection, rather than walked by
                # the next few (more CPU than pausing saved, paid by the first edit).
                gc.freeze()
    except Exception:  # keeping is an optimisation: never the end of the child
        input_cache.drop_kept()  # the next build reads back, as without keeping


def _own_process_group() -> None:
    """Lead a process group, so one signal reaches this process and its parser workers."""
    # already a group leader (or not permitted): the daemon falls back to the pid
    with contextlib.suppress(OSError):
        os.setpgid(0, 0)


def _die_with_daemon(requests: TextIO) -> None:
    """
    End with the daemon, whatever signal ends it (even SIGKILL, which leaves it no time to
    stop us): the kernel sends SIGTERM when it dies (Linux ``PR_SET_PDEATHSIG``, or a thread
    watching the parent pid elsewhere), and a thread sends it too when the daemon's end of
    the request pipe closes, mid-build included.
    """
    from eshu_mcp.query.local.index.build.builder_process import PARENT_ENV
    from eshu_mcp.query.local.index.build.stopping import die_with_parent

    parent = os.environ.get(PARENT_ENV, "")
    if parent.isdigit():
        die_with_parent(int(parent), signal.SIGTERM)
    try:
        fd = requests.fileno()
    except (AttributeError, OSError, ValueError):
        return
    threading.Thread(target=_end_on_hangup, args=(fd,), name="daemon-pipe", daemon=True).start()


def _end_on_hangup(fd: int) -> None:
    """Block until the request pipe's writer is gone, then stop this process."""
    poller = select.poll()
    poller.register(fd, select.POLLHUP | select.POLLERR)
    while True:
        events = poller.poll()
        if any(mask & (select.POLLHUP | select.POLLERR | select.POLLNVAL) for _, mask in events):
            os.kill(os.getpid(), signal.SIGTERM)
            return


def main(argv: list[str]) -> int:
    """Entry point of the child process."""
    _own_process_group()  # first: a Ctrl-C meant for the daemon must not reach us mid-import
    _die_with_daemon(sys.stdin)
    parser = argparse.ArgumentParser(prog="eshu-mcp-builder")
    parser.add_argument("--db", required=True, help="index file")
    options = parser.parse_args(argv)
    try:
        return serve(str(Path(options.db).expanduser()), sys.stdin, sys.stdout)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
