"""
Tests for generations and fact versions (eshu_mcp.query.local.index.store.generations) through
incremental runs: modify, add, delete, rename; freshness; and a writer killed mid-write.
"""

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.build.indexer import HOLD_ENV, index_repositories
from eshu_mcp.query.local.index.resolve.graph import resolve_repository
from eshu_mcp.query.local.index.store.database import open_reader, open_writer
from eshu_mcp.query.local.index.store.generations import (
    FACT_RETENTION_GENERATIONS,
    FactLedger,
    payload_hash,
)
from tests.test_index_indexer import fixture_repository, git

ROOT = Path(__file__).resolve().parent.parent


def changed_since(conn, since_seq: int) -> dict[str, dict[str, int]]:
    """Classify facts between generation ``since_seq`` and the live state (route §2.8)."""
    before = {
        r[0]: (r[1], r[2])
        for r in conn.execute(
            "SELECT stable_fact_key, fact_kind, payload_hash FROM fact_versions"
            " WHERE valid_from <= ? AND (valid_to IS NULL OR valid_to > ?)",
            (since_seq, since_seq),
        )
    }
    now = {
        r[0]: (r[1], r[2])
        for r in conn.execute(
            "SELECT stable_fact_key, fact_kind, payload_hash FROM fact_versions"
            " WHERE valid_to IS NULL"
        )
    }
    ended = {
        r[0]: r[1]
        for r in conn.execute(
            "SELECT stable_fact_key, end_reason FROM fact_versions WHERE valid_to > ?",
            (since_seq,),
        )
    }
    counts: dict[str, dict[str, int]] = {}

    def bump(kind: str, label: str) -> None:
        bucket = counts.setdefault(kind, {})
        bucket[label] = bucket.get(label, 0) + 1

    for key, (kind, payload) in now.items():
        if key not in before:
            bump(kind, "added")
        elif before[key][1] != payload:
            bump(kind, "updated")
        else:
            bump(kind, "unchanged")
    for key, (kind, _) in before.items():
        if key not in now:
            bump(kind, "retired" if ended.get(key) == "retired" else "superseded")
    return counts


class IncrementalIndexTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="eshu-gen-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.repo = fixture_repository(self.tmp)
        self.db = self.tmp / "index.sqlite"
        self.first = index_repositories(self.db, [self.repo], workers=1).repositories[0]

    def reader(self):
        conn = open_reader(self.db)
        self.addCleanup(conn.close)
        return conn

    def test_unchanged_tree_is_fresh_and_writes_no_generation(self) -> None:
        again = index_repositories(self.db, [self.repo], workers=1).repositories[0]
        self.assertEqual((again.status, again.reparsed), ("fresh", ()))
        count = self.reader().execute("SELECT COUNT(*) FROM generations").fetchone()[0]
        self.assertEqual(count, 1)

    def test_touched_but_identical_file_is_not_reparsed(self) -> None:
        target = self.repo / "app" / "fees.py"
        os.utime(target, ns=(1, 1))
        again = index_repositories(self.db, [self.repo], workers=1).repositories[0]
        self.assertEqual((again.status, again.reparsed), ("fresh", ()))

    def test_modify_add_delete_rename_reparses_only_what_changed(self) -> None:
        fees = self.repo / "app" / "fees.py"
        fees.write_text(fees.read_text().replace("return value * 2", "return value * 3"))
        (self.repo / "app" / "refunds.py").write_text(
            "from app.fees import compute_fee\n\n\ndef refund(amount):\n"
            "    return amount - compute_fee(amount)\n"
        )
        (self.repo / "app" / "cycle_b.py").unlink()
        git(self.repo, "mv", "web/main.ts", "web/entry.ts")
        second = index_repositories(self.db, [self.repo], workers=1).repositories[0]

        self.assertEqual((second.status, second.seq), ("indexed", 2))
        self.assertEqual(sorted(second.added), ["app/refunds.py", "web/entry.ts"])
        self.assertEqual(second.modified, ("app/fees.py",))
        self.assertEqual(sorted(second.deleted), ["app/cycle_b.py", "web/main.ts"])

        conn = self.reader()
        statuses = conn.execute("SELECT seq, status FROM generations ORDER BY seq").fetchall()
        self.assertEqual([tuple(r) for r in statuses], [(1, "superseded"), (2, "active")])
        counts = changed_since(conn, 1)
        files = conn.execute("SELECT COUNT(*) FROM files").fetchone()[0]
        self.assertEqual(
            counts["file"],
            {"added": 2, "updated": 1, "retired": 2, "unchanged": files - 3},
        )
        entity_counts = counts["content_entity"]
        # unused_helper's body changed; refund is new; ping/pong and report moved or vanished.
        self.assertEqual(entity_counts["updated"], 1)
        self.assertEqual(entity_counts["added"], 2)
        self.assertEqual(entity_counts["retired"], 2)
        self.assertEqual(counts["repository"], {"updated": 1})

    def test_changes_since_the_newest_generation_are_empty(self) -> None:
        (self.repo / "README.md").write_text("changed\n")
        index_repositories(self.db, [self.repo], workers=1)
        counts = changed_since(self.reader(), 2)
        self.assertEqual(set(counts["file"]), {"unchanged"})

    def test_new_edges_follow_a_new_caller_in_another_file(self) -> None:
        (self.repo / "app" / "refunds.py").write_text(
            "from app.fees import unused_helper\n\n\ndef refund(v):\n    return unused_helper(v)\n"
        )
        index_repositories(self.db, [self.repo], workers=1)
        conn = self.reader()
        callers = conn.execute(
            "SELECT s.entity_name FROM edges e JOIN entities t ON t.entity_id = e.target_id"
            " JOIN entities s ON s.entity_id = e.source_id"
            " WHERE e.type = 'CALLS' AND t.entity_name = 'unused_helper'"
        ).fetchall()
        self.assertEqual([r[0] for r in callers], ["refund"])

    def test_superseded_entity_when_removed_from_a_surviving_file(self) -> None:
        fees = self.repo / "app" / "fees.py"
        fees.write_text(fees.read_text().split("def unused_helper")[0])
        index_repositories(self.db, [self.repo], workers=1)
        conn = self.reader()
        reasons = conn.execute(
            "SELECT end_reason FROM fact_versions WHERE fact_kind = 'content_entity'"
            " AND valid_to = 2"
        ).fetchall()
        self.assertEqual([r[0] for r in reasons], ["superseded"])

    def test_incremental_edges_equal_a_full_rebuild(self) -> None:
        fees = self.repo / "app" / "fees.py"
        fees.write_text(fees.read_text() + "\n\ndef charge(x):\n    return compute_fee(x)\n")
        (self.repo / "app" / "cycle_a.py").unlink()
        base = self.repo / "app" / "base.py"
        base.write_text("import os\n" + base.read_text())  # shifts every entity id in base.py
        (self.repo / "web" / "extra.ts").write_text(
            "import { Circle } from './shapes';\nexport function make() { return new Circle(1); }\n"
        )
        second = index_repositories(self.db, [self.repo], workers=1).repositories[0]
        self.assertLess(second.edges["rebuilt_files"], second.files_seen)
        columns = (
            "SELECT type, source_id, target_id, line_number, resolution_method, call_kind"
            " FROM edges"
        )
        conn = open_writer(self.db)
        self.addCleanup(conn.close)
        conn.row_factory = None
        incremental = sorted(conn.execute(columns).fetchall(), key=repr)
        unresolved = sorted(conn.execute("SELECT * FROM unresolved_calls").fetchall())
        conn.execute("BEGIN")
        resolve_repository(conn, second.repo_id)
        full = sorted(conn.execute(columns).fetchall(), key=repr)
        full_unresolved = sorted(conn.execute("SELECT * FROM unresolved_calls").fetchall())
        conn.execute("ROLLBACK")
        self.assertEqual(
            (
                sorted(set(incremental) - set(full), key=repr),
                sorted(set(full) - set(incremental), key=repr),
            ),
            ([], []),
        )
        self.assertEqual(incremental, full)
        self.assertEqual(unresolved, full_unresolved)

    def test_changed_base_class_rebuilds_inherited_calls_like_a_full_rebuild(self) -> None:
        (self.repo / "app" / "audit.py").write_text(
            "class Audited:\n    def describe(self):\n        return 'audited'\n"
        )
        (self.repo / "app" / "refund.py").write_text(
            "from app.service import PaymentService\n\n\nclass RefundService(PaymentService):\n"
            "    def refund(self):\n        return self.describe()\n"
        )
        index_repositories(self.db, [self.repo], workers=1)
        service = self.repo / "app" / "service.py"
        service.write_text(
            service.read_text()
            .replace("from app.base import BaseService", "from app.audit import Audited")
            .replace("PaymentService(BaseService)", "PaymentService(Audited)")
        )
        index_repositories(self.db, [self.repo], workers=1)
        conn = self.reader()
        target = conn.execute(
            "SELECT t.relative_path, e.resolution_method FROM edges e"
            " JOIN entities s ON s.entity_id = e.source_id"
            " JOIN entities t ON t.entity_id = e.target_id"
            " WHERE e.type = 'CALLS' AND s.entity_name = 'refund'"
        ).fetchall()
        self.assertEqual([tuple(r) for r in target], [("app/audit.py", "type_inferred")])

    def test_editing_a_subclass_without_touching_its_bases_rebuilds_only_what_it_affects(
        self,
    ) -> None:
        service = self.repo / "app" / "service.py"
        service.write_text(service.read_text() + "\n\ndef audit_marker():\n    return 1\n")
        again = index_repositories(self.db, [self.repo], workers=1).repositories[0]
        self.assertEqual(again.modified, ("app/service.py",))
        self.assertLess(again.edges["rebuilt_files"], again.files_seen)
        service.write_text(service.read_text().replace("(BaseService)", "(object)"))
        rebased = index_repositories(self.db, [self.repo], workers=1).repositories[0]
        self.assertEqual(rebased.edges["rebuilt_files"], rebased.files_seen)

    def test_adding_a_remote_moves_the_tree_to_its_new_identity(self) -> None:
        git(self.repo, "remote", "add", "origin", "https://github.com/acme/polyglot.git")
        again = index_repositories(self.db, [self.repo], workers=1).repositories[0]
        self.assertEqual(
            again.repo_id,
            "repository:r_" + hashlib.sha1(b"https://github.com/acme/polyglot").hexdigest()[:8],
        )
        conn = self.reader()
        repos = [r[0] for r in conn.execute("SELECT repo_id FROM repositories")]
        self.assertEqual(repos, [again.repo_id])
        stale = conn.execute(
            "SELECT COUNT(*) FROM entities WHERE repo_id = ?", (self.first.repo_id,)
        ).fetchone()[0]
        self.assertEqual(stale, 0)
        hits = conn.execute(
            "SELECT COUNT(*) FROM entity_source WHERE source_cache LIKE '%compute_fee%'"
        ).fetchone()[0]
        self.assertEqual(hits, 3)  # compute_fee, PaymentService and charge: no stale rows

    def test_payload_hash_is_short_and_deterministic(self) -> None:
        self.assertEqual(payload_hash("a", "b"), payload_hash("a", "b"))
        self.assertEqual(len(payload_hash("a")), 16)
        self.assertGreater(FACT_RETENTION_GENERATIONS, 1)


class KilledWriterTests(SynchronousTestCase):
    def test_killed_writer_leaves_previous_generation_serving(self) -> None:
        tmp = Path(tempfile.mkdtemp(prefix="eshu-kill-"))
        self.addCleanup(shutil.rmtree, tmp, True)
        repo = fixture_repository(tmp)
        db = tmp / "index.sqlite"
        first = index_repositories(db, [repo], workers=1).repositories[0]
        before = open_reader(db)
        entities_before = before.execute("SELECT COUNT(*) FROM entities").fetchone()[0]
        before.close()

        (repo / "app" / "extra.py").write_text("def extra():\n    return 1\n")
        env = dict(os.environ, PYTHONPATH=str(ROOT), **{HOLD_ENV: str(tmp / "never")})
        child = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "eshu_mcp.query.local.index.build.command",
                str(repo),
                "--db",
                str(db),
                "--json",
                "--workers",
                "1",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        self.addCleanup(child.stderr.close)
        self.addCleanup(child.stdout.close)
        phases = []
        for _ in range(50):  # bounded: the child prints at most a dozen lines before holding
            line = child.stdout.readline()
            if not line:
                break
            phases.append(json.loads(line)["phase"])
            if phases[-1] == "holding":
                break
        self.assertEqual(phases[-1], "holding", phases)
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=30)

        conn = open_reader(db)
        self.addCleanup(conn.close)
        active = conn.execute("SELECT active_generation_id FROM repositories").fetchone()[0]
        self.assertEqual(active, first.generation_id)
        self.assertEqual(
            conn.execute("SELECT COUNT(*) FROM entities").fetchone()[0], entities_before
        )
        self.assertIsNone(
            conn.execute("SELECT 1 FROM files WHERE relative_path = 'app/extra.py'").fetchone()
        )
        statuses = [
            tuple(r) for r in conn.execute("SELECT seq, status FROM generations ORDER BY seq")
        ]
        self.assertEqual(statuses, [(1, "active"), (2, "pending")])

        recovered = index_repositories(db, [repo], workers=1).repositories[0]
        self.assertEqual((recovered.status, recovered.seq), ("indexed", 3))
        rows = conn.execute(
            "SELECT seq, status, failure_class FROM generations ORDER BY seq"
        ).fetchall()
        self.assertEqual(
            [tuple(r) for r in rows],
            [(1, "superseded", None), (2, "failed", "interrupted"), (3, "active", None)],
        )


class FactLedgerTests(SynchronousTestCase):
    def setUp(self) -> None:
        tmp = Path(tempfile.mkdtemp(prefix="eshu-ledger-"))
        self.addCleanup(shutil.rmtree, tmp, True)
        self.conn = open_writer(tmp / "index.sqlite")
        self.addCleanup(self.conn.close)

    def versions(self) -> list[tuple]:
        rows = self.conn.execute(
            "SELECT stable_fact_key, payload_hash, valid_from, valid_to, end_reason"
            " FROM fact_versions ORDER BY stable_fact_key, valid_from"
        )
        return [tuple(row) for row in rows]

    def test_held_new_versions_are_written_by_the_next_plain_flush(self) -> None:
        first = FactLedger(self.conn, "repository:r_1", 1)
        first.observe_known("k:b", "content_entity", "h1", None)
        first.flush(hold_opens=True)
        self.assertEqual(self.versions(), [])
        first.observe_known("k:a", "content_entity", "h2", None)
        first.flush()
        self.assertEqual(
            self.versions(), [("k:a", "h2", 1, None, None), ("k:b", "h1", 1, None, None)]
        )

    def test_closes_are_written_even_when_new_versions_are_held(self) -> None:
        first = FactLedger(self.conn, "repository:r_1", 1)
        first.observe_known("k:a", "content_entity", "h1", None)
        first.flush()
        second = FactLedger(self.conn, "repository:r_1", 2)
        second.observe("k:a", "content_entity", "h2")
        second.flush(hold_opens=True)
        self.assertEqual(self.versions(), [("k:a", "h1", 1, 2, "updated")])
        second.flush()
        self.assertEqual(
            self.versions(), [("k:a", "h1", 1, 2, "updated"), ("k:a", "h2", 2, None, None)]
        )

    def test_opening_many_new_keys_is_observing_each_with_nothing_live(self) -> None:
        one_by_one = FactLedger(self.conn, "repository:r_1", 3)
        one_by_one.observe_known("k:b", "content_entity", "h1", None)
        one_by_one.observe_known("k:a", "content_entity", "h2", None)
        one_by_one.flush()
        expected = self.versions()
        self.conn.execute("DELETE FROM fact_versions")
        at_once = FactLedger(self.conn, "repository:r_1", 3)
        at_once.open_new("content_entity", [("k:b", "h1"), ("k:a", "h2")])
        at_once.flush()
        self.assertEqual(self.versions(), expected)
        self.assertEqual(len(expected), 2)
