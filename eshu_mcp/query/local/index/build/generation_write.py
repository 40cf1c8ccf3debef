"""
The body of one generation's write transaction: parse changed files in the worker pool and
insert their rows as they arrive, retire deleted files, record fact versions, then rebuild
the affected part of the graph and the repository's git facts.
"""

from __future__ import annotations

import os
import time
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import closing
from functools import partial

from eshu_mcp.query.local.index.build.stopping import hold_point, start_worker
from eshu_mcp.query.local.index.parse.collectors import collector_for
from eshu_mcp.query.local.index.parse.languages import is_parsed_language, language_of
from eshu_mcp.query.local.index.parse.rows import parse_file, read_limit
from eshu_mcp.query.local.index.resolve.declared import declared_edges
from eshu_mcp.query.local.index.resolve.edge_tally import EdgeTally
from eshu_mcp.query.local.index.resolve.graph import ChangeSet, resolve_repository, retire_edges
from eshu_mcp.query.local.index.resolve.inputs import (
    FirstBuildInputs,
    attribute_types_json,
    go_mods_on_disk,
)
from eshu_mcp.query.local.index.store import writer
from eshu_mcp.query.local.index.store.bulk import BulkLoad, insert_rows, worth_bulk_loading
from eshu_mcp.query.local.index.store.generations import (
    FactLedger,
    PendingGeneration,
    file_key,
    payload_hash,
    repository_key,
)
from eshu_mcp.query.local.index.store.identity import repository_slug
from eshu_mcp.query.local.index.store.moved import Kept, kept_nodes, rename_nodes
from eshu_mcp.query.local.index.store.writer import PreparedFile
from eshu_mcp.query.local.index.walk.reading import read_bounded
from eshu_mcp.query.local.index.walk.worktree import WalkedFile, WorkTree

IN_PROCESS_BELOW = 48
"""Batches smaller than this are parsed in-process: a pool costs more than it saves."""
GRAPH_INPUT_TABLES = ("entity_rows", "call_rows", "imports", "modules")
"""Bulk-loaded tables complete before call resolution: indexed while it runs."""
FLUSH_EVERY = 64
"""Files whose rows are inserted together."""
INCREMENTAL_RESOLVE_FRACTION = 0.25
"""Above this share of changed files the whole graph is rebuilt (cheaper than scoping)."""


def _parse_walked(item: tuple[str, str, str]) -> PreparedFile | None:
    relative, absolute, repo_id = item
    hold_point("worker")
    read = read_bounded(absolute, read_limit(relative))
    if read is None:
        return None  # vanished, unreadable or no longer a regular file since the walk
    data, byte_size = read
    return writer.prepare_rows(parse_file(relative, data, byte_size), repo_id)


def parse_many(
    items: list[tuple[str, str, str]], workers: int | None = None
) -> Iterator[PreparedFile | None]:
    """
    Parse (relative path, absolute path, repo id) items into prepared rows, in a process
    pool sized to the machine (in-process for tiny batches), in input order.
    """
    workers = workers or os.cpu_count() or 1
    if len(items) < IN_PROCESS_BELOW or workers < 2:
        yield from map(_parse_walked, items)
        return
    import multiprocessing

    warm_parsers(item[0] for item in items)
    context = multiprocessing.get_context("fork")
    chunk = max(1, min(8, len(items) // (workers * 8)))  # small: no straggler at the end
    pool = ProcessPoolExecutor(
        max_workers=workers,
        mp_context=context,
        initializer=start_worker,
        initargs=(os.getpid(),),
    )
    try:
        yield from _in_order(pool, items, chunk, window=workers * 4)
    except BrokenProcessPool:
        stop_workers(pool)
        raise WorkerDied(
            "a parser worker process died (killed, or out of memory); nothing was committed"
        ) from None
    except BaseException:  # a stop request, an error while writing, or the consumer closing
        stop_workers(pool)
        raise
    pool.shutdown(wait=True)


def warm_parsers(paths: Iterable[str]) -> None:
    """
    Before forking the pool: load the collectors and the extractor (grammar, compiled
    queries) of each parsed language the paths' extensions name, once, so the workers inherit
    them instead of each loading its own (about 0.06 CPU-s per worker and language).
    """
    by_suffix: dict[str, str] = {}
    for path in paths:
        name = path.rpartition("/")[2]
        if "." in name:
            by_suffix.setdefault(name.rpartition(".")[2].lower(), path)
    warmed: set[str] = set()
    for path in by_suffix.values():
        language = language_of(path)
        if language not in warmed and is_parsed_language(language) and not collector_for(path):
            warmed.add(language)
            writer.prepare_rows(parse_file(path, b"", 0), "")


def _parse_batch(batch: list[tuple[str, str, str]]) -> list[PreparedFile | None]:
    return [_parse_walked(item) for item in batch]


def _in_order(
    pool: ProcessPoolExecutor, items: list[tuple[str, str, str]], chunk: int, window: int
) -> Iterator[PreparedFile | None]:
    """
    ``pool.map`` over batches of ``chunk`` items, at most ``window`` batches in flight.

    Unlike ``Executor.map`` it never cancels its futures when the consumer stops: on
    Python 3.11 a cancelled future that the pool later fails (its workers killed by
    :func:`stop_workers`) makes the pool's manager thread print a traceback.
    """
    batches = (items[start : start + chunk] for start in range(0, len(items), chunk))
    in_flight: deque = deque()
    for batch in batches:
        in_flight.append(pool.submit(_parse_batch, batch))
        if len(in_flight) >= window:
            break
    while in_flight:
        results = in_flight.popleft().result()
        following = next(batches, None)
        if following is not None:
            in_flight.append(pool.submit(_parse_batch, following))
        yield from results


class WorkerDied(Exception):
    """A parser worker ended abruptly; the run's generation is not committed."""


def stop_workers(pool: ProcessPoolExecutor, grace: float = 5.0) -> None:
    """Kill the pool's workers now (their work is abandoned) and reap them, bounded."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    # Not cancel_futures: on Python 3.11 the pool's manager thread then fails the cancelled
    # futures once more when it finds the workers killed, and prints a traceback.
    pool.shutdown(wait=False)
    for process in processes:
        if process.is_alive():
            process.kill()
    for process in processes:
        process.join(grace)
    pool.shutdown(wait=True)  # the manager thread sees the workers gone and ends


class GenerationWrite:
    """The body of one generation's write transaction."""

    def __init__(self, conn, tree: WorkTree, pending: PendingGeneration, existing, emit) -> None:
        self.conn = conn
        self.tree = tree
        self.pending = pending
        self.repo_id = pending.repo_id
        self.existing = existing
        self.emit = emit
        self.ledger = FactLedger(conn, self.repo_id, pending.seq)
        self.added: list[str] = []
        self.modified: list[str] = []
        self.deleted: list[str] = []
        self.file_facts: list[tuple[str, str]] = []
        self.entities = 0
        self.failed = 0
        self.source_bytes = 0
        self.changed_ids: set[int] = set()
        self.deleted_ids: set[int] = set()
        self.touched_names: set[str] = set()
        self.hierarchy_changed = False
        self.bulk: BulkLoad | None = None
        self.numbers = writer.NodeNumbers(conn)
        self.batch = writer.RowBatch(
            conn.execute("SELECT COALESCE(MAX(call_id), 0) + 1 FROM call_rows").fetchone()[0],
        )
        self.new_files: list[tuple] = []
        self.next_file_id = conn.execute(
            "SELECT COALESCE(MAX(file_id), 0) + 1 FROM files"
        ).fetchone()[0]
        self.repo_key = conn.execute(
            "SELECT repo_key FROM repositories WHERE repo_id = ?", (self.repo_id,)
        ).fetchone()[0]
        # every module node of the repository at once for a build that writes many files;
        # one by one (as files import them) for a few: reading thousands cost a one-file build
        self.modules = writer.module_nodes(conn, self.repo_id) if not existing else {}
        self.first: FirstBuildInputs | None = None  # graph inputs gathered by a first build
        self.planned_ids: dict[str, int] = {}  # a first build's file ids, fixed before parsing
        self.tally = EdgeTally.start(conn, self.repo_id, self.repo_key) if existing else None

    def delete(self, paths: list[str]) -> None:
        """Retire deleted files: their rows, their entity facts and their file fact."""
        retire_edges(self.conn, [self.existing[path][1] for path in paths])
        for path in paths:
            file_id = self.existing[path][1]
            old = writer.delete_file(self.conn, file_id)
            self.deleted_ids.add(file_id)
            self.touched_names.update(e.name for e in old)
            writer.record_entity_facts(
                self.ledger, [e.entity_id for e in old], {}, file_deleted=True
            )
            self.ledger.close(file_key(self.repo_id, path), "retired")
            self.deleted.append(path)

    def write_parsed(self, to_parse: list[WalkedFile], workers) -> None:
        """Parse in the pool and write each result as it arrives (parsing overlaps writing)."""
        started = time.monotonic()
        if worth_bulk_loading(self.conn, len(to_parse), len(self.existing)):
            self.bulk = BulkLoad(self.conn)
        if not self.existing:
            paths = [w.relative_path for w in to_parse]
            planned = list(enumerate(paths, self.next_file_id))
            self.planned_ids = {path: file_id for file_id, path in planned}
            self.next_file_id += len(planned)
            self.first = FirstBuildInputs(planned, go_mods_on_disk(self.tree.root, paths))
        retire_edges(
            self.conn,
            [
                self.existing[w.relative_path][1]
                for w in to_parse
                if w.relative_path in self.existing
            ],
        )
        items = [(w.relative_path, w.absolute_path, self.repo_id) for w in to_parse]
        with closing(parse_many(items, workers)) as results:  # closed now, even on a stop
            self._write_results(to_parse, results, started)
        self._flush()

    def _write_results(self, to_parse: list[WalkedFile], results, started: float) -> None:
        for done, (walked, result) in enumerate(zip(to_parse, results, strict=True), 1):
            if result is None:
                self.first = None  # its planned file id stays unused: read the graph back
                if walked.relative_path in self.existing:
                    self.delete([walked.relative_path])
            else:
                self._write_one(walked, result)
            if done % FLUSH_EVERY == 0:
                self._flush()
            if done % 50 == 0 or done == len(to_parse):
                elapsed = time.monotonic() - started
                self.emit(
                    {
                        "phase": "parse",
                        "repo_id": self.repo_id,
                        "done": done,
                        "total": len(to_parse),
                        "rate": round(done / elapsed, 1) if elapsed > 0 else None,
                    }
                )
            if done == 1:
                hold_point("parse", self.emit)

    def _flush(self) -> None:
        if self.new_files:
            insert_rows(
                self.conn,
                f"INSERT INTO files (file_id, repo_id, relative_path, {writer.FILE_COLUMNS})"
                f" VALUES ({','.join('?' * (3 + writer.FILE_COLUMN_COUNT))})",
                self.new_files,
            )
            self.new_files.clear()
        self.batch.flush(self.conn, self.numbers)
        # a first build's facts are new keys no one reads back before finish() writes them
        self.ledger.flush(hold_opens=not self.existing)

    def _write_one(self, walked: WalkedFile, prepared: PreparedFile) -> None:
        result = prepared.parsed
        row = self.existing.get(walked.relative_path)
        values = writer.file_values(
            result, self.pending.generation_id, self.tree.head_commit, walked.mtime_ns
        )
        old: list[writer.OldEntity] = []
        kept: Kept | None = None
        if row is None:
            file_id = self._new_file_id(walked.relative_path)
            self.new_files.append((file_id, self.repo_id, walked.relative_path, *values))
            file_nid = self.numbers.new(writer.file_node(file_id))
        else:
            file_id = row[1]
            self._note_hierarchy(file_id, prepared)
            kept = kept_nodes(self.conn, file_id, prepared)
            old = writer.clear_file(self.conn, file_id)
            writer.update_file(self.conn, file_id, values)
            file_nid = self._file_nid(file_id)
        if kept is not None:  # kept definitions' nodes stay, renamed; new ones numbered after
            writer.forget_nodes(self.conn, kept.removed)
            staying = [
                (nid, eid)
                for nid, eid in zip(kept.nids, prepared.entity_ids, strict=True)
                if nid is not None
            ]
            rename_nodes(self.conn, [nid for nid, _ in staying], [eid for _, eid in staying])
            nids = [
                self.numbers.new(eid) if nid is None else nid
                for nid, eid in zip(kept.nids, prepared.entity_ids, strict=True)
            ]
        elif not old:  # a new file, or one that had no entities: every node is new
            nids = self.numbers.many(prepared.entity_ids)
        else:
            reuse = {e.entity_id: e.nid for e in old}
            nids = [reuse.pop(eid, None) or self.numbers.new(eid) for eid in prepared.entity_ids]
            writer.forget_nodes(self.conn, list(reuse.values()))
        first = self.first
        resolved = None if first is None else first.resolve_imports(file_id, prepared)
        calls_from = len(self.batch.calls)
        references_from = len(self.batch.references)
        self.batch.add(self.repo_id, file_id, prepared, nids, resolved)
        declared = declared_edges(
            self.repo_key,
            file_id,
            file_nid,
            prepared.entity_rows,
            nids,
            prepared.import_rows,
            self._module_nid,
        )
        self.batch.edges.extend(declared)
        if first is not None:
            first.add_file(file_id, file_nid, prepared, nids)
            first.calls.extend(self.batch.calls[calls_from:])
            first.references.extend(self.batch.references[references_from:])
            first.declared.update(row[1] for row in declared)
        payloads = prepared.payloads
        if self.existing:  # a first build resolves everything: it scopes nothing by name
            # names defined, removed, or re-signed (a return annotation types call results); a
            # definition that only moved kept its node, so resolving its name gives what it gave
            before = {(e.nid, e.name, e.signature) for e in old}
            after = {
                (nid, row[1], row[writer.SIGNATURE])
                for nid, row in zip(nids, prepared.entity_rows, strict=True)
            }
            self.touched_names.update(name for _, name, _ in before ^ after)
        self.entities += len(payloads)
        self.changed_ids.add(file_id)
        self.failed += result.parse_status == "parse_error"
        self.source_bytes += result.byte_size
        writer.record_entity_facts(
            self.ledger, [e.entity_id for e in old], payloads, file_deleted=False
        )
        self.file_facts.append(
            (
                file_key(self.repo_id, walked.relative_path),
                payload_hash(result.content_hash, result.language or ""),
            )
        )
        (self.added if row is None else self.modified).append(walked.relative_path)

    def _new_file_id(self, path: str) -> int:
        planned = self.planned_ids.get(path)
        if planned is not None:
            return planned
        file_id = self.next_file_id
        self.next_file_id += 1
        return file_id

    def _file_nid(self, file_id: int) -> int:
        row = self.conn.execute(
            "SELECT nid FROM nodes WHERE node_id = ?", (writer.file_node(file_id),)
        ).fetchone()
        return row[0] if row is not None else self.numbers.new(writer.file_node(file_id))

    def _module_nid(self, module: str) -> int:
        key = f"{self.repo_id}|{module}"
        nid = self.modules.get(key)
        if nid is None and self.existing:
            row = self.conn.execute("SELECT nid FROM nodes WHERE node_id = ?", (key,)).fetchone()
            nid = None if row is None else self.modules.setdefault(key, row[0])
        if nid is None:
            nid = self.modules[key] = self.numbers.new(key)
        return nid

    def _note_hierarchy(self, file_id: int, prepared: PreparedFile) -> None:
        """A surviving class with other bases changes inherited-method resolution in files
        this change set cannot name: the whole graph is rebuilt then."""
        old_bases = {
            tuple(row)  # a sqlite3.Row never equals a tuple
            for row in self.conn.execute(
                "SELECT r.entity_name, b.base_name, b.kind FROM bases b"
                " JOIN nodes n ON n.node_id = b.entity_id JOIN entity_rows r ON r.rid = n.nid"
                " WHERE b.file_id = ?",
                (file_id,),
            )
        }
        new_bases = {
            (prepared.entity_rows[row][1], base, kind) for row, base, kind in prepared.base_rows
        }
        # a class's declared attribute types type self.attr calls in its subclasses' files
        old_types = {
            tuple(row)
            for row in self.conn.execute(
                "SELECT entity_name, json_extract(metadata, '$.attribute_types') FROM entity_rows"
                " WHERE file_id = ? AND metadata LIKE '%\"attribute_types\"%'",
                (file_id,),
            )
        }
        new_types = {
            (row[1], attribute_types_json(row[writer.METADATA]))
            for row in prepared.entity_rows
            if '"attribute_types"' in row[writer.METADATA]
        }
        self.hierarchy_changed |= old_bases != new_bases or old_types != new_types

    def finish(self) -> dict[str, int]:
        """Facts, edges, repository row and refs; returns edge counts."""
        conn, tree, repo_id = self.conn, self.tree, self.repo_id
        live = self.ledger.live_payloads([key for key, _ in self.file_facts])
        for key, payload in self.file_facts:
            self.ledger.observe_known(key, "file", payload, live.get(key))
        self.ledger.observe(
            repository_key(repo_id),
            "repository",
            payload_hash(tree.remote_url or "", tree.freshness_hint, tree.head_ref or ""),
        )
        self.emit({"phase": "resolve", "repo_id": repo_id})
        hold_point("resolve", self.emit)
        change = None
        rebuilt = len(self.changed_ids) + len(self.deleted_ids)
        small = rebuilt <= INCREMENTAL_RESOLVE_FRACTION * len(self.existing)
        if self.existing and small and not self.hierarchy_changed:
            change = ChangeSet(
                frozenset(self.changed_ids),
                frozenset(self.deleted_ids),
                frozenset(self.touched_names),
                same_layout=not self.added
                and not self.deleted
                and not any(p == "go.mod" or p.endswith("/go.mod") for p in self.modified),
            )
        inputs = self.first.inputs() if self.first is not None else None
        meanwhile = None
        if self.bulk is not None:
            meanwhile = partial(self.bulk.finish, GRAPH_INPUT_TABLES)
        edges = resolve_repository(conn, repo_id, change, inputs, meanwhile, self.tally)
        if self.bulk is not None:
            self.bulk.finish()
        conn.execute(
            "UPDATE repositories SET head_commit = ?, head_ref = ?, default_branch = ?,"
            " dirty = ?, remote_url = ?, repo_slug = ?, has_remote = ? WHERE repo_id = ?",
            (
                tree.head_commit,
                tree.head_ref,
                tree.default_branch,
                int(tree.dirty),
                tree.remote_url,
                repository_slug(tree.remote_url),
                int(tree.remote_url is not None),
                repo_id,
            ),
        )
        conn.execute("DELETE FROM repository_refs WHERE repo_id = ?", (repo_id,))
        conn.executemany(
            "INSERT OR REPLACE INTO repository_refs"
            " (repo_id, ref_name, ref_kind, commit_sha, is_head) VALUES (?, ?, ?, ?, ?)",
            [(repo_id, r.name, r.kind, r.commit_sha, int(r.is_head)) for r in tree.refs],
        )
        self.ledger.flush()
        self.ledger.prune()
        return edges
