"""
Tests for the shared code-route helpers, and the small index builder the other
``test_api_code_*`` modules use to write rows per ``schema.sql``.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
import tempfile
from contextlib import closing
from pathlib import Path
from typing import Any

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.api.code.common import (
    RequestFields,
    attach_sources,
    check_offset,
    entity_label,
    fetch_entities,
    language_values,
    next_offset,
)
from eshu_mcp.query.local.api.platform import framework
from eshu_mcp.query.local.api.platform.framework import ApiContext, ApiError
from eshu_mcp.query.local.index.store.database import open_reader, open_writer
from eshu_mcp.query.local.index.store.search import index_stored_files


def scratch_dir(case: SynchronousTestCase) -> str:
    """A temporary directory outside the source tree, removed after the test."""
    path = tempfile.mkdtemp(prefix="eshu-code-test-")
    case.addCleanup(shutil.rmtree, path, True)
    return path


class CodeIndex:
    """
    A hand-built index database: repositories, files, entities, edges, imports, secrets.

    Rows follow ``schema.sql``; entity byte spans are computed from the line span so
    the ``entity_source`` view returns the real source text.
    """

    def __init__(self, directory: str) -> None:
        self.path = str(Path(directory) / "index.sqlite")
        self.writer = open_writer(self.path)
        self.files: dict[tuple[str, str], int] = {}
        self.texts: dict[int, str] = {}
        self.entities: dict[str, str] = {}

    def repository(self, name: str, *, remote: str | None = None) -> str:
        """Add a repository with one active generation; returns its id."""
        repo_id = "repository:r_" + hashlib.sha1(name.encode()).hexdigest()[:8]
        slug = remote.split("/", 3)[-1] if remote else None
        self.writer.execute(
            "INSERT INTO repositories (repo_id, name, local_path, remote_url, repo_slug,"
            " has_remote, created_at, active_generation_id, gen_seq)"
            " VALUES (?, ?, ?, ?, ?, ?, '2026-12-02T10:00:00Z', ?, 1)",
            (repo_id, name, f"/nonexistent/{name}", remote, slug, int(bool(remote)), "g-" + name),
        )
        self.writer.execute(
            "INSERT INTO generations (generation_id, repo_id, seq, scope_id, status,"
            " observed_at) VALUES (?, ?, 1, ?, 'active', '2026-12-02T10:00:00Z')",
            ("g-" + name, repo_id, "git-repository-scope:" + repo_id),
        )
        return repo_id

    def file(
        self, repo_id: str, path: str, text: str, language: str | None = "python", **flags: int
    ) -> int:
        """Add a file; returns its file id."""
        cursor = self.writer.execute(
            "INSERT INTO files (repo_id, relative_path, language, content, content_hash,"
            " byte_size, line_count, parse_status, indexed_at, generation_id, is_test,"
            " is_generated) VALUES (?, ?, ?, ?, ?, ?, ?, 'parsed', '2026-12-02T10:00:00Z',"
            " 'g', ?, ?)",
            (
                repo_id,
                path,
                language,
                text,
                hashlib.sha256(text.encode()).hexdigest(),
                len(text.encode()),
                len(text.splitlines()),
                flags.get("is_test", 0),
                flags.get("is_generated", 0),
            ),
        )
        file_id = int(cursor.lastrowid)
        self.writer.execute(
            "INSERT INTO files_fts (rowid, relative_path, content) VALUES (?, ?, ?)",
            (file_id, path, text),
        )
        self.files[(repo_id, path)] = file_id
        self.texts[file_id] = text
        return file_id

    def entity(
        self,
        file_id: int,
        entity_type: str,
        name: str,
        start_line: int,
        end_line: int,
        *,
        metadata: dict[str, Any] | None = None,
        complexity: int | None = None,
        arg_count: int | None = None,
        parent: str | None = None,
        class_context: str | None = None,
        docstring: str | None = None,
        is_test: int = 0,
    ) -> str:
        """Add an entity spanning whole lines of its file; returns its id."""
        repo_id, path, language = self.writer.execute(
            "SELECT repo_id, relative_path, language FROM files WHERE file_id = ?", (file_id,)
        ).fetchone()
        text = self.texts[file_id].encode()
        lines = text.split(b"\n")
        start_byte = sum(len(line) + 1 for line in lines[: start_line - 1])
        end_byte = sum(len(line) + 1 for line in lines[:end_line]) - 1
        key = f"{repo_id}\n{path}\n{entity_type.lower()}\n{name}\n{start_line}"
        entity_id = "content-entity:e_" + hashlib.blake2s(key.encode()).hexdigest()[:12]
        self.writer.execute(
            "INSERT INTO entities (entity_id, repo_id, file_id, relative_path, entity_type,"
            " entity_name, start_line, end_line, start_byte, end_byte, language,"
            " parent_entity_id, class_context, cyclomatic_complexity, arg_count, line_span,"
            " is_test, docstring, metadata, generation_id)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'g')",
            (
                entity_id,
                repo_id,
                file_id,
                path,
                entity_type,
                name,
                start_line,
                end_line,
                start_byte,
                end_byte,
                language,
                parent,
                class_context,
                complexity,
                arg_count,
                end_line - start_line + 1,
                is_test,
                docstring,
                json.dumps(metadata or {}),
            ),
        )
        self.entities[name] = entity_id
        return entity_id

    def edge(
        self,
        kind: str,
        source: str,
        target: str,
        *,
        method: str = "same_file",
        confidence: float = 0.95,
        line: int | None = None,
        repo_id: str | None = None,
        reason: str | None = None,
        call_kind: str | None = None,
    ) -> None:
        """Add a resolved edge between two node ids."""
        if repo_id is None:
            row = self.writer.execute(
                "SELECT repo_id FROM entities WHERE entity_id = ?", (source,)
            ).fetchone()
            repo_id = row[0] if row else ""
        self.writer.execute(
            "INSERT INTO edges (repo_id, type, source_id, target_id, call_kind, reason,"
            " resolution_method, confidence, line_number, generation_id)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'g')",
            (repo_id, kind, source, target, call_kind, reason, method, confidence, line),
        )

    def calls(self, caller: str, callee: str, **kwargs: Any) -> None:
        """A CALLS edge between two named entities."""
        self.edge("CALLS", self.entities[caller], self.entities[callee], **kwargs)

    def import_row(
        self,
        repo_id: str,
        file_id: int,
        module: str,
        line: int,
        *,
        imported_name: str | None = None,
        alias: str | None = None,
        resolved_file_id: int | None = None,
    ) -> None:
        """An import statement row (and its Module node)."""
        self.writer.execute(
            "INSERT INTO imports (repo_id, file_id, module, imported_name, alias, import_type,"
            " line_number, resolved_file_id, is_external) VALUES (?, ?, ?, ?, ?, 'from', ?, ?, ?)",
            (
                repo_id,
                file_id,
                module,
                imported_name,
                alias,
                line,
                resolved_file_id,
                int(resolved_file_id is None),
            ),
        )
        self.writer.execute(
            "INSERT OR IGNORE INTO modules (module_key, repo_id, name, language, file_id)"
            " VALUES (?, ?, ?, 'python', ?)",
            (f"{repo_id}|{module}", repo_id, module, resolved_file_id),
        )

    def secret(
        self,
        file_id: int,
        line: int,
        kind: str,
        excerpt: str,
        *,
        notes: list[str] | None = None,
        severity: str = "high",
    ) -> None:
        """A hardcoded-secret candidate row (already redacted, as the indexer writes it)."""
        repo_id, path, language = self.writer.execute(
            "SELECT repo_id, relative_path, language FROM files WHERE file_id = ?", (file_id,)
        ).fetchone()
        self.writer.execute(
            "INSERT INTO secret_candidates (repo_id, file_id, relative_path, language,"
            " line_number, finding_kind, redacted_excerpt, suppression_notes, severity)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                repo_id,
                file_id,
                path,
                language,
                line,
                kind,
                excerpt,
                json.dumps(notes or []),
                severity,
            ),
        )

    def reader(self) -> sqlite3.Connection:
        """A read-only connection, as the API layer gets one (search documents written)."""
        with closing(sqlite3.connect(self.path, isolation_level=None)) as conn:
            index_stored_files(conn)
        return open_reader(self.path)


def call(
    conn: sqlite3.Connection,
    pattern: str,
    body: Any,
    *,
    envelope: bool = True,
    principal: Any = None,
):
    """Run the registered POST handler for ``pattern`` the way the resource would."""
    import eshu_mcp.query.local.api  # noqa: F401  (registers every route family)

    route = framework.ROUTES.find("POST", pattern)
    assert route is not None and not route.fallback, pattern
    ctx = ApiContext(conn, "POST", {}, {}, body, envelope, principal)
    return route.handler(ctx)


def error_of(conn: sqlite3.Connection, pattern: str, body: Any, principal: Any = None) -> ApiError:
    """The ApiError a handler raises for ``body``."""
    try:
        call(conn, pattern, body, principal=principal)
    except ApiError as error:
        return error
    raise AssertionError(f"{pattern} accepted {body!r}")


class RequestFieldsTests(SynchronousTestCase):
    """Request bodies decode with Go's rules: wrong types are 400, null is the zero value."""

    def test_string_limit_is_invalid_json(self):
        error = self.assertRaises(ApiError, RequestFields({"limit": "5"}).integer, "limit")
        self.assertEqual(error.status, 400)
        self.assertTrue(error.detail.startswith("invalid JSON: "))
        self.assertIn(".limit of type int", error.detail)

    def test_null_and_absent_values_take_defaults(self):
        fields = RequestFields({"limit": None, "exclude_decorated_with": None})
        self.assertEqual(fields.integer("limit", 25), 25)
        self.assertEqual(fields.strings("exclude_decorated_with"), [])
        self.assertEqual(fields.boolean("exact"), False)
        self.assertEqual(fields.string("repo_id"), "")

    def test_integral_float_is_accepted_and_fraction_refused(self):
        self.assertEqual(RequestFields({"limit": 5.0}).integer("limit"), 5)
        self.assertRaises(ApiError, RequestFields({"limit": 2.5}).integer, "limit")

    def test_bool_is_not_an_integer(self):
        self.assertRaises(ApiError, RequestFields({"limit": True}).integer, "limit")

    def test_offset_bounds_use_eshu_texts(self):
        self.assertEqual(
            self.assertRaises(ApiError, check_offset, -1).detail, "offset must be >= 0"
        )
        self.assertEqual(
            self.assertRaises(ApiError, check_offset, 10001).detail, "offset must be <= 10000"
        )
        self.assertEqual(check_offset(10000), 10000)


class NamingTests(SynchronousTestCase):
    """Type names and languages normalise the way Eshu's filters do."""

    def test_snake_case_types_map_to_labels(self):
        self.assertEqual(entity_label("type_alias"), "TypeAlias")
        self.assertEqual(entity_label("class"), "Class")
        self.assertEqual(entity_label("FUNCTION"), "Function")

    def test_typescript_filter_includes_tsx(self):
        self.assertEqual(language_values("TypeScript"), ["typescript", "tsx"])
        self.assertEqual(language_values("csharp"), ["c_sharp"])
        self.assertEqual(language_values(""), [])

    def test_next_offset_only_when_truncated(self):
        self.assertEqual(next_offset(0, 25, True), 25)
        self.assertIsNone(next_offset(0, 25, False))
        self.assertIsNone(next_offset(9990, 25, True))


class EntitySourceTests(SynchronousTestCase):
    """Entity source text is sliced from the file body by byte span."""

    def test_source_of_a_function_is_its_lines(self):
        index = CodeIndex(scratch_dir(self))
        repo = index.repository("payments")
        text = "import os\n\ndef charge(amount):\n    return amount * 2\n"
        file_id = index.file(repo, "app/service.py", text)
        index.entity(file_id, "Function", "charge", 3, 4)
        index.writer.close()
        conn = index.reader()
        rows = fetch_entities(conn, "e.entity_name = ?", ["charge"], "e.rid", 5)
        attach_sources(conn, rows)
        self.assertEqual(rows[0]["source_cache"], "def charge(amount):\n    return amount * 2")
        self.assertEqual(rows[0]["repo_name"], "payments")


SHOP_SERVICE = """\
class Base:
    def run(self):
        return 1


class Child(Base):
    def run(self):
        return helper()


def charge(amount):
    return helper(amount)


def helper(value=None):
    return value


def loop(n):
    return loop(n - 1)


def ping():
    return pong()


def pong():
    return ping()


def old_refund():
    return None
"""

SHOP_API = """\
from service import charge


def create_charge(req):
    return charge(req)


def batch(items):
    for item in items:
        charge(item)
    return create_charge(items)
"""


def shop_index(case: SynchronousTestCase) -> tuple[CodeIndex, str]:
    """A small call graph with known callers, a hierarchy, recursion and a dead function."""
    index = CodeIndex(scratch_dir(case))
    repo = index.repository("shop")
    service = index.file(repo, "shop/service.py", SHOP_SERVICE)
    base = index.entity(service, "Class", "Base", 1, 3)
    index.entity(service, "Function", "run", 2, 3, parent=base, class_context="Base")
    base_run = index.entities["run"]
    child = index.entity(service, "Class", "Child", 6, 8, metadata={"bases": ["Base"]})
    index.entity(service, "Function", "run", 7, 8, parent=child, class_context="Child")
    child_run = index.entities["run"]
    index.entity(service, "Function", "charge", 11, 12, complexity=1, arg_count=1)
    index.entity(service, "Function", "helper", 15, 16, complexity=1, arg_count=1)
    index.entity(service, "Function", "loop", 19, 20, complexity=1, arg_count=1)
    index.entity(service, "Function", "ping", 23, 24, complexity=1)
    index.entity(service, "Function", "pong", 27, 28, complexity=1)
    index.entity(service, "Function", "old_refund", 31, 32, complexity=1)
    api = index.file(repo, "shop/api.py", SHOP_API)
    index.entity(api, "Function", "create_charge", 4, 5, complexity=1, arg_count=1)
    index.entity(api, "Function", "batch", 8, 11, complexity=2, arg_count=1)
    index.calls("create_charge", "charge", method="import_binding", confidence=0.9, line=5)
    index.calls("batch", "charge", method="repo_unique_name", confidence=0.5, line=10)
    index.calls("batch", "create_charge", line=11)
    index.calls("charge", "helper", line=12)
    index.edge("CALLS", child_run, index.entities["helper"], line=8)
    index.calls("loop", "loop", line=20)
    index.calls("ping", "pong", line=24)
    index.calls("pong", "ping", line=28)
    index.edge("INHERITS", child, base, method="same_file", line=6)
    index.edge("OVERRIDES", child_run, base_run, method="same_file", line=7)
    index.import_row(repo, api, "service", 1, imported_name="charge", resolved_file_id=service)
    index.edge(
        "IMPORTS",
        f"file:{api}",
        f"{repo}|service",
        method="declared",
        line=1,
        repo_id=repo,
        reason='{"imported_name": "charge", "alias": null}',
    )
    index.writer.commit()
    return index, repo
