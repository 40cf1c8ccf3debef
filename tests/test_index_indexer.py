"""Tests for eshu_mcp.query.local.index.build.indexer against the polyglot fixture's known facts."""

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.build.indexer import index_repositories
from eshu_mcp.query.local.index.store.database import open_reader
from eshu_mcp.query.local.index.store.identity import entity_id

FIXTURE = Path(__file__).parent / "fixtures" / "polyglot"
PLANTED_KEY = "AKIAQ3ZT7WXR2NLF4KDM"


def git(repo: Path, *args: str) -> str:
    """Run git in a fixture repository with a fixed identity."""
    done = subprocess.run(
        ["git", "-C", str(repo), "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
        capture_output=True,
        check=True,
        timeout=30,
    )
    return done.stdout.decode()


def fixture_repository(parent: Path) -> Path:
    """Copy the polyglot fixture into ``parent`` as a committed git repository."""
    repo = parent / "polyglot"
    shutil.copytree(FIXTURE, repo)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "fixture")
    return repo


class PolyglotIndexTests(SynchronousTestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = Path(tempfile.mkdtemp(prefix="eshu-index-"))
        cls.repo = fixture_repository(cls.tmp)
        (cls.repo / "image.bin").write_bytes(b"\x89PNG\x00\x01binary")
        os.symlink("/etc/hostname", cls.repo / "outside_link")
        os.symlink("app/fees.py", cls.repo / "fees_link.py")
        cls.db = cls.tmp / "index.sqlite"
        cls.report = index_repositories(cls.db, [cls.repo], workers=1)
        cls.conn = open_reader(cls.db)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.conn.close()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def entity(self, path: str, name: str, entity_type: str = "Function"):
        row = self.conn.execute(
            "SELECT * FROM entities WHERE relative_path = ? AND entity_name = ?"
            " AND entity_type = ?",
            (path, name, entity_type),
        ).fetchone()
        self.assertIsNotNone(row, f"{entity_type} {name} in {path}")
        return row

    def edge(self, kind: str, source: str, target: str):
        return self.conn.execute(
            "SELECT * FROM edges WHERE type = ? AND source_id = ? AND target_id = ?",
            (kind, source, target),
        ).fetchone()

    def test_report_marks_the_repository_indexed_as_generation_one(self) -> None:
        (repo,) = self.report.repositories
        self.assertEqual((repo.status, repo.seq), ("indexed", 1))
        row = self.conn.execute("SELECT * FROM repositories").fetchone()
        self.assertEqual(row["active_generation_id"], repo.generation_id)
        self.assertEqual(row["local_path"], str(self.repo.resolve()))

    def test_every_fixture_language_is_parsed(self) -> None:
        languages = {
            r[0]
            for r in self.conn.execute("SELECT language FROM files WHERE parse_status = 'parsed'")
        }
        self.assertTrue(
            {"python", "go", "typescript", "java", "rust", "c", "cpp", "c_sharp", "ruby", "php"}
            <= languages
        )

    def test_ignored_skipped_binary_and_escaping_symlink_files(self) -> None:
        paths = {
            r[0]: r[1] for r in self.conn.execute("SELECT relative_path, parse_status FROM files")
        }
        self.assertNotIn("generated/ignored.py", paths)
        self.assertNotIn("node_modules/leftpad/index.js", paths)
        self.assertNotIn("outside_link", paths)
        self.assertEqual(paths["image.bin"], "binary")
        self.assertEqual(paths["fees_link.py"], "parsed")

    def test_entity_ids_follow_eshus_formula(self) -> None:
        row = self.entity("app/fees.py", "compute_fee")
        expected = entity_id(row["repo_id"], "app/fees.py", "Function", "compute_fee", 1)
        self.assertEqual(row["entity_id"], expected)

    def test_callers_of_compute_fee_include_payment_service_charge(self) -> None:
        fee = self.entity("app/fees.py", "compute_fee")
        charge = self.entity("app/service.py", "charge")
        edge = self.edge("CALLS", charge["entity_id"], fee["entity_id"])
        self.assertEqual((edge["resolution_method"], edge["confidence"]), ("import_binding", 0.95))

    def test_create_charge_constructs_the_service_and_calls_charge(self) -> None:
        api = self.entity("app/api.py", "create_charge")["entity_id"]
        service = self.entity("app/service.py", "PaymentService", "Class")["entity_id"]
        charge = self.entity("app/service.py", "charge")["entity_id"]
        construct = self.edge("CALLS", api, service)
        self.assertEqual(construct["call_kind"], "constructor_call")
        self.assertEqual(self.edge("CALLS", api, charge)["resolution_method"], "type_inferred")

    def test_self_call_resolves_through_the_callers_class(self) -> None:
        # self.m() is resolved by the receiver's class (its MRO), not by file proximity
        charge = self.entity("app/service.py", "charge")["entity_id"]
        validate = self.entity("app/service.py", "_validate")["entity_id"]
        self.assertEqual(self.edge("CALLS", charge, validate)["resolution_method"], "type_inferred")

    def test_unused_helper_has_no_incoming_reachability(self) -> None:
        unused = self.entity("app/fees.py", "unused_helper")["entity_id"]
        incoming = self.conn.execute(
            "SELECT COUNT(*) FROM edges WHERE target_id = ? AND type IN ('CALLS', 'IMPORTS')",
            (unused,),
        ).fetchone()[0]
        self.assertEqual(incoming, 0)

    def test_class_hierarchy_across_languages(self) -> None:
        pairs = [
            ("app/service.py", "PaymentService", "app/base.py", "BaseService", "INHERITS"),
            ("java/com/acme/Dog.java", "Dog", "java/com/acme/Animal.java", "Animal", "INHERITS"),
            ("web/shapes.ts", "Circle", "web/shapes.ts", "Shape", "INHERITS"),
            ("cpp/shapes.cpp", "Square", "cpp/shapes.cpp", "Shape", "INHERITS"),
            ("ruby/greeter.rb", "Greeter", "ruby/base.rb", "Base", "INHERITS"),
            ("php/User.php", "User", "php/Model.php", "Model", "INHERITS"),
        ]
        for child_path, child, base_path, base, kind in pairs:
            child_id = self.entity(child_path, child, "Class")["entity_id"]
            base_id = self.entity(base_path, base, "Class")["entity_id"]
            self.assertIsNotNone(self.edge(kind, child_id, base_id), f"{child} -> {base}")
        square = self.entity("cs/Shapes.cs", "Square", "Class")["entity_id"]
        shape = self.entity("cs/Shapes.cs", "IShape", "Interface")["entity_id"]
        self.assertIsNotNone(self.edge("IMPLEMENTS", square, shape))

    def test_overriding_methods_point_at_the_base_method(self) -> None:
        child = self.entity("app/service.py", "charge")["entity_id"]
        base = self.entity("app/base.py", "charge")["entity_id"]
        self.assertIsNotNone(self.edge("OVERRIDES", child, base))
        dog = self.entity("java/com/acme/Dog.java", "speak")["entity_id"]
        animal = self.entity("java/com/acme/Animal.java", "speak")["entity_id"]
        self.assertIsNotNone(self.edge("OVERRIDES", dog, animal))

    def test_import_cycle_between_cycle_a_and_cycle_b(self) -> None:
        rows = self.conn.execute(
            "SELECT f.relative_path, r.relative_path FROM imports i"
            " JOIN files f ON f.file_id = i.file_id JOIN files r ON r.file_id = i.resolved_file_id"
            " WHERE f.relative_path LIKE 'app/cycle_%'"
        ).fetchall()
        self.assertEqual(
            sorted(map(tuple, rows)),
            [("app/cycle_a.py", "app/cycle_b.py"), ("app/cycle_b.py", "app/cycle_a.py")],
        )

    def test_imports_link_files_to_modules_and_imported_definitions(self) -> None:
        api = self.conn.execute(
            "SELECT file_id, repo_id FROM files WHERE relative_path = 'app/api.py'"
        ).fetchone()
        module = self.edge("IMPORTS", f"file:{api['file_id']}", f"{api['repo_id']}|app.service")
        self.assertEqual(
            json.loads(module["reason"]), {"imported_name": "PaymentService", "alias": None}
        )
        service = self.entity("app/service.py", "PaymentService", "Class")["entity_id"]
        bound = self.edge("IMPORTS", f"file:{api['file_id']}", service)
        self.assertEqual(bound["resolution_method"], "import_binding")
        modules = self.conn.execute(
            "SELECT m.name, f.relative_path FROM modules m JOIN files f ON f.file_id = m.file_id"
            " WHERE m.name = 'app.service'"
        ).fetchall()
        self.assertEqual([tuple(r) for r in modules], [("app.service", "app/service.py")])

    def test_cross_language_calls_resolve(self) -> None:
        main_go = self.entity("cmd/main.go", "main")["entity_id"]
        new_server = self.entity("server/server.go", "NewServer")["entity_id"]
        self.assertEqual(
            self.edge("CALLS", main_go, new_server)["resolution_method"], "import_binding"
        )
        main_c = self.entity("c/main.c", "main")["entity_id"]
        add = self.entity("c/util.c", "add")["entity_id"]
        self.assertIsNotNone(self.edge("CALLS", main_c, add))
        run = self.entity("rust/src/lib.rs", "run")["entity_id"]
        helper = self.entity("rust/src/util.rs", "helper")["entity_id"]
        self.assertEqual(self.edge("CALLS", run, helper)["resolution_method"], "import_binding")
        report = self.entity("web/main.ts", "report")["entity_id"]
        total = self.entity("web/shapes.ts", "totalArea")["entity_id"]
        self.assertEqual(self.edge("CALLS", report, total)["resolution_method"], "import_binding")

    def test_builtin_and_external_calls_are_explained(self) -> None:
        reasons = dict(
            self.conn.execute(
                "SELECT c.full_name, u.reason FROM unresolved_calls u"
                " JOIN call_sites c ON c.call_id = u.call_id"
            ).fetchall()
        )
        self.assertEqual(reasons["type"], "builtin")
        self.assertEqual(reasons["fmt.Errorf"], "external")

    def test_complexity_follows_the_mccabe_table(self) -> None:
        self.assertEqual(self.entity("app/fees.py", "compute_fee")["cyclomatic_complexity"], 4)
        self.assertEqual(self.entity("server/server.go", "Start")["cyclomatic_complexity"], 3)
        self.assertEqual(self.entity("rust/src/lib.rs", "run")["cyclomatic_complexity"], 2)
        self.assertIsNone(self.entity("web/shapes.ts", "totalArea")["cyclomatic_complexity"])

    def test_methods_carry_class_context_and_containment(self) -> None:
        start = self.entity("server/server.go", "Start")
        self.assertEqual(start["class_context"], "Server")
        charge = self.entity("app/service.py", "charge")
        service = self.entity("app/service.py", "PaymentService", "Class")
        self.assertEqual(charge["parent_entity_id"], service["entity_id"])
        self.assertIsNotNone(self.edge("CONTAINS", service["entity_id"], charge["entity_id"]))

    def test_docstrings_and_signatures_are_recorded(self) -> None:
        base = self.entity("app/base.py", "BaseService", "Class")
        self.assertEqual(json.loads(base["metadata"])["docstring"], "Common service behaviour.")
        self.assertEqual(
            self.entity("app/fees.py", "compute_fee")["signature"], "def compute_fee(amount)"
        )
        module = self.entity("app/base.py", "app.base", "Module")
        self.assertEqual(module["start_line"], 1)

    def test_planted_aws_key_is_found_redacted_and_hashed(self) -> None:
        (row,) = self.conn.execute(
            "SELECT * FROM secret_candidates WHERE finding_kind = 'aws_access_key'"
        ).fetchall()
        self.assertEqual((row["relative_path"], row["line_number"]), ("config/settings.env", 3))
        self.assertNotIn(PLANTED_KEY, row["redacted_excerpt"])
        self.assertIn("[REDACTED]", row["redacted_excerpt"])
        self.assertEqual(row["value_hash"], hashlib.sha256(PLANTED_KEY.encode()).hexdigest())
        self.assertEqual(json.loads(row["suppression_notes"]), [])

    def test_word_search_finds_files_and_entity_sources(self) -> None:
        files = self.conn.execute(
            "SELECT f.relative_path FROM files_fts JOIN files f ON f.file_id = files_fts.rowid"
            " WHERE files_fts MATCH 'compute_fee AND amount'"
        ).fetchall()
        self.assertEqual(
            sorted(r[0] for r in files), ["app/fees.py", "app/service.py", "fees_link.py"]
        )
        prefix = self.conn.execute(
            "SELECT f.relative_path FROM files_fts JOIN files f ON f.file_id = files_fts.rowid"
            " WHERE files_fts MATCH 'compute_f*'"
        ).fetchall()
        self.assertEqual(len(prefix), 3)
        entities = self.conn.execute(
            "SELECT entity_name FROM entity_source WHERE source_cache LIKE '%woof%'"
        ).fetchall()
        self.assertEqual(sorted(r[0] for r in entities), ["Dog", "bark"])

    def test_every_live_fact_starts_in_generation_one(self) -> None:
        kinds = dict(
            self.conn.execute(
                "SELECT fact_kind, COUNT(*) FROM fact_versions WHERE valid_from = 1"
                " AND valid_to IS NULL GROUP BY fact_kind"
            ).fetchall()
        )
        files = self.conn.execute("SELECT COUNT(*) FROM files").fetchone()[0]
        entities = self.conn.execute("SELECT COUNT(*) FROM entities").fetchone()[0]
        self.assertEqual(kinds, {"file": files, "content_entity": entities, "repository": 1})


class ForeignKeyCheckTests(SynchronousTestCase):
    """A first build writes unchecked; every other build, and deleting, keeps the checks."""

    def test_only_first_builds_skip_the_checks_and_deletes_still_cascade(self) -> None:
        from eshu_mcp.query.local.index.build import generation_write

        tmp = Path(tempfile.mkdtemp(prefix="eshu-fk-"))
        self.addCleanup(shutil.rmtree, tmp, True)
        repo = fixture_repository(tmp)
        other = tmp / "other"
        other.mkdir()
        (other / "lonely.py").write_text("def lonely():\n    return 2\n")
        checked: list[tuple[str, int]] = []
        real = generation_write.GenerationWrite.write_parsed

        def recording(run, to_parse, workers):
            state = run.conn.execute("PRAGMA foreign_keys").fetchone()[0]
            checked.append((run.tree.root.name, state))
            return real(run, to_parse, workers)

        self.patch(generation_write.GenerationWrite, "write_parsed", recording)
        db = tmp / "index.sqlite"
        self.assertTrue(index_repositories(db, [repo], workers=1).ok)
        (repo / "app" / "fees.py").unlink()
        report = index_repositories(db, [other, repo], workers=1)
        self.assertTrue(report.ok, report)
        self.assertEqual(report.repositories[1].deleted, ("app/fees.py",))
        self.assertEqual(checked, [("polyglot", 0), ("other", 0), ("polyglot", 1)])
        conn = open_reader(db)
        self.addCleanup(conn.close)
        for table in ("entity_rows", "call_rows", "imports", "search_docs", "reference_rows"):
            orphans = conn.execute(
                f"SELECT COUNT(*) FROM {table} WHERE file_id NOT IN (SELECT file_id FROM files)"
            ).fetchone()[0]
            self.assertEqual(orphans, 0, table)
        self.assertEqual(conn.execute("PRAGMA foreign_key_check").fetchall(), [])
