"""
A token granted one repository reads nothing of another, through any tool or route.

Two repositories are indexed into one index: ``alpha`` (the polyglot fixture) and
``zqbravo`` (written here: its own names, paths and files, plus two function names it
shares with alpha). A token granted alpha only calls every tool of the catalog (with
alpha's and then bravo's names, paths, entity ids and repository id) and every route of
the route map. Every answer must equal the answer of an index that holds alpha alone (so
nothing of bravo, not even a count, changes it) and name nothing of bravo.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.auth import CredentialPolicy, guard
from eshu_mcp.auth.principal import SCOPED, Principal
from eshu_mcp.auth.scoped import ScopedToken, ScopedTokenChecker, token_sha256
from eshu_mcp.catalog import read_only_tools
from eshu_mcp.dispatch import InProcessDispatcher, run_read_only_tool
from eshu_mcp.dispatch.routes import Route
from eshu_mcp.query.local.api.platform.grants import grant, restricted, shadow
from eshu_mcp.query.local.api.platform.resource import LocalQueryResource
from eshu_mcp.query.local.api.platform.routemap import load_route_map
from eshu_mcp.query.local.index.build.indexer import index_repositories
from eshu_mcp.query.local.index.store.database import open_reader
from tests.test_api_resource import InlinePool, ThreadReactor

FIXTURE = Path(__file__).with_name("fixtures") / "polyglot"
TOKEN = "alpha-only-token"

BRAVO_SOURCES = {
    "zqledger/__init__.py": "",
    "zqledger/fees.py": (
        "def compute_fee(amount):\n"
        "    return zq_rounding(amount) * 3\n\n\n"
        "def zq_rounding(amount):\n"
        "    return round(amount, 2)\n\n\n"
        "def create_charge(amount):\n"
        "    return compute_fee(amount)\n"
    ),
    "zqledger/vault.py": (
        "from zqledger.fees import compute_fee\n\n\n"
        "class ZqVaultBase:\n"
        "    def zq_open(self):\n"
        "        return 1\n\n\n"
        "class ZqVault(ZqVaultBase):\n"
        "    def zq_deposit(self, amount):\n"
        "        if amount > 10:\n"
        "            return compute_fee(amount)\n"
        "        return self.zq_open()\n\n\n"
        "def zq_unused_helper():\n"
        "    return ZqVault()\n"
    ),
    "zqweb/zqclient.ts": (
        "export function zqFetchLedger(id: string): string {\n  return zqFormat(id);\n}\n"
        "function zqFormat(id: string): string {\n  return `ledger-${id}`;\n}\n"
    ),
    "zqsvc/zqmain.go": (
        "package main\n\nfunc zqServe() int { return zqPort() }\n\n"
        "func zqPort() int { return 8125 }\n\nfunc main() { zqServe() }\n"
    ),
    "Dockerfile": "FROM python:3.12-slim AS zqbuild\nCOPY zqledger /zqapp\n",
    "requirements.txt": "zqpackage==1.2.3\n",
    "package.json": '{"name": "zq-web", "dependencies": {"zq-left-pad": "^1.0.0"}}\n',
    "zqinfra/zqmain.tf": 'resource "aws_s3_bucket" "zq_bucket" {\n  bucket = "zq-ledger"\n}\n',
    "zqdeploy/zqdeployment.yaml": (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: zq-ledger-api\n"
        "spec:\n  template:\n    spec:\n      containers:\n        - name: zqapi\n"
        "          image: zqregistry.example/zq-ledger:1.0\n"
    ),
    ".github/workflows/zqci.yml": (
        "name: zqci\non: [push]\njobs:\n  zqtest:\n    runs-on: ubuntu-latest\n"
        "    steps:\n      - run: pytest zqledger\n"
    ),
    "CODEOWNERS": "/zqledger/ @zqteam\n",
    "docs/zqguide.md": "# Zq guide\n\nCall `compute_fee` from `ZqVault.zq_deposit`.\n",
    "zqconfig/zqsettings.py": 'ZQ_API_TOKEN = "zq9f8e7d6c5b4a3f2e1d0c"\n',
}

ENV = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_SYSTEM": os.devnull}
GIT = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]

REPO_KEYS = {
    "repo_id",
    "repository_id",
    "repo",
    "repository",
    "consumer_repo_id",
    "source_repository_id",
    "start_repo_id",
    "end_repo_id",
    "provider_repo_id",
    "repo_name",
}
ENTITY_KEYS = {
    "entity_id",
    "start_entity_id",
    "end_entity_id",
    "source_entity_id",
    "target_id",
    "source_id",
    "anchor_id",
    "resolved_id",
    "entity_ref",
}
NAME_KEYS = {
    "query",
    "symbol",
    "target",
    "function_name",
    "name",
    "start",
    "end",
    "class_name",
    "method_name",
    "q",
    "pattern",
    "topic",
    "question",
    "candidate",
    "left",
    "right",
    "source_module",
    "target_module",
    "module_id",
}
PATH_KEYS = {"file_path", "path", "relative_path", "source_file", "target_file"}
EXPANDED_ENUMS = ("query_type", "metric_type", "mode", "relationship_type", "direction")
VOLATILE = (
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)"), "<time>"),
    (re.compile(r'"(age_seconds|elapsed_ms|duration_ms|took_ms)": [0-9.e-]+'), '"<elapsed>"'),
    # Topic search's bm25 share reads FTS5's corpus statistics (document count, average
    # length, documents per word), which span every repository's documents: a scoped
    # caller's relevance values can differ from an index of its repositories alone, never
    # its rows, names or counts (the README says so under Authentication).
    (re.compile(r'"relevance": [0-9.e-]+'), '"<relevance>"'),
    (re.compile(r'"(score|baseline_score)": -?\d+\.\d+'), '"<bm25 score>"'),
)


def work_tree(root: Path, sources: dict[str, str] | None = None) -> Path:
    """A committed git work tree at ``root``: the polyglot fixture, or ``sources``."""
    if sources is None:
        shutil.copytree(FIXTURE, root)
    else:
        for relative, text in sources.items():
            path = root / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    for argv in (["git", "init", "-q"], ["git", "add", "-A"], [*GIT, "commit", "-qm", "init"]):
        subprocess.run(argv, cwd=root, env=ENV, check=True, timeout=60)
    return root


def profile(conn: sqlite3.Connection, repo_id: str, name: str) -> dict[str, Any]:
    """The values a caller would pass about one repository: its id, a name, a path, an id."""
    entity = conn.execute(
        "SELECT entity_id, relative_path FROM entities WHERE repo_id = ? AND entity_name = ?"
        " ORDER BY entity_id LIMIT 1",
        (repo_id, name),
    ).fetchone()
    return {
        "repo_id": repo_id,
        "name": name,
        "entity_id": entity[0],
        "path": entity[1],
        "scope_id": "git-repository-scope:" + repo_id,
    }


def arguments(tool: Any, values: dict[str, Any]) -> list[dict[str, Any]]:
    """Plausible arguments for ``tool`` built from ``values`` (one set per expanded enum)."""
    schema = tool.input_schema
    properties = schema.get("properties", {})
    required = set(schema.get("required", []))
    args: dict[str, Any] = {}
    for key, spec in properties.items():
        kind = spec.get("type")
        if key in REPO_KEYS and kind == "string":
            args[key] = values["repo_id"]
        elif key == "scope_id":
            args[key] = values["scope_id"]
        elif key in ENTITY_KEYS and kind == "string":
            args[key] = values["entity_id"]
        elif key == "handles":
            args[key] = ["entity:" + values["entity_id"]]
        elif key in NAME_KEYS and kind == "string" and "enum" not in spec:
            args[key] = values["name"]
        elif key in PATH_KEYS and kind == "string":
            args[key] = values["path"]
        elif key in ("repo_ids", "consumer_repo_ids"):
            args[key] = [values["repo_id"]]
        elif key == "changed_paths":
            args[key] = [values["path"]]
        elif "enum" in spec:
            args[key] = spec.get("default", spec["enum"][0])
        elif key in required:
            args[key] = {
                "string": "x",
                "integer": spec.get("minimum", 1),
                "number": 1,
                "boolean": False,
                "array": [],
                "object": {},
            }.get(kind, "x")
    for key in EXPANDED_ENUMS:
        options = properties.get(key, {}).get("enum")
        if options:
            return [{**args, key: option} for option in options]
    return [args]


def normalized(result: Any) -> str:
    """An answer as JSON with the values that differ between two runs masked."""
    text = json.dumps(result, sort_keys=True)
    for pattern, mask in VOLATILE:
        text = pattern.sub(mask, text)
    return text


class ScopedTokenReadsTests(SynchronousTestCase):
    """
    A token granted alpha only, against an index of alpha and bravo: each answer equals
    the same token's answer from an index of alpha alone, and with alpha's values also the
    answer of an unscoped caller there.
    """

    @classmethod
    def setUpClass(cls):
        base = cls.base = Path(tempfile.mkdtemp(prefix="eshu-grants-")).resolve()
        alpha = work_tree(base / "alpha")
        bravo = work_tree(base / "zqbravo", BRAVO_SOURCES)
        cls.alone = str(base / "alpha-alone.sqlite")
        cls.both = str(base / "both.sqlite")
        assert index_repositories(cls.both, [str(alpha)], workers=1).ok
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(cls.both + suffix):
                shutil.copy(cls.both + suffix, cls.alone + suffix)
        assert index_repositories(cls.both, [str(bravo)], workers=1).ok
        conn = open_reader(cls.both)
        try:
            ids = dict(conn.execute("SELECT name, repo_id FROM repositories").fetchall())
            cls.alpha_id, cls.bravo_id = ids["alpha"], ids["zqbravo"]
            cls.alpha = profile(conn, cls.alpha_id, "compute_fee")
            cls.bravo = profile(conn, cls.bravo_id, "compute_fee")
            cls.bravo_only = {**profile(conn, cls.bravo_id, "zq_deposit"), "name": "ZqVault"}
            cls.forbidden = cls._bravo_strings(conn, str(bravo))
            # Bravo's ids and names passed with alpha's repository id.
            in_alpha = {"repo_id": cls.alpha_id, "scope_id": cls.alpha["scope_id"]}
            cls.profiles = (
                cls.alpha,
                cls.bravo,
                cls.bravo_only,
                {**cls.bravo, **in_alpha},
                {**cls.bravo_only, **in_alpha},
            )
        finally:
            conn.close()

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.base, ignore_errors=True)

    @classmethod
    def _bravo_strings(cls, conn: sqlite3.Connection, path: str) -> set[str]:
        """Everything that names bravo: its id, path, files, entity ids and generations."""
        found = {cls.bravo_id, path, "zqbravo", "zqledger", "Zq", "zq_", "zq-"}
        for (relative,) in conn.execute(
            "SELECT relative_path FROM files WHERE repo_id = ?", (cls.bravo_id,)
        ):
            if "zq" in relative:  # Dockerfile, CODEOWNERS: words alpha's answers use too
                found.add(relative)
        for (entity_id,) in conn.execute(
            "SELECT entity_id FROM entities WHERE repo_id = ?", (cls.bravo_id,)
        ):
            found.add(entity_id)
        for (generation,) in conn.execute(
            "SELECT generation_id FROM generations WHERE repo_id = ?", (cls.bravo_id,)
        ):
            found.add(generation)
        return found

    def setUp(self):
        entry = ScopedToken(
            token_sha256(TOKEN),
            Principal(
                mode=SCOPED,
                tenant_id="t",
                workspace_id="w",
                allowed_repository_ids=(self.alpha_id,),
            ),
        )
        policy = CredentialPolicy(checkers=(ScopedTokenChecker((entry,)),), scoped_tokens_file="x")
        self.scoped = guard(self.resource(self.both), policy)
        self.reference = guard(self.resource(self.alone), policy)
        self.unscoped = self.resource(self.alone)

    @staticmethod
    def resource(db: str) -> LocalQueryResource:
        return LocalQueryResource(db, reactor=ThreadReactor(), threadpool=InlinePool())

    def leaked(self, answer: str, args: Any) -> list[str]:
        """The strings of bravo in ``answer`` that the caller did not pass itself."""
        passed = json.dumps(args)
        return sorted(s for s in self.forbidden if s in answer and s not in passed)

    def tool(self, resource: Any, name: str, args: dict, token: str | None) -> Any:
        header = f"Bearer {token}" if token else None
        return self.successResultOf(
            run_read_only_tool(resource, name, args, header, clock=Clock(), timeout=60)
        )

    def test_every_tool_answers_alpha_only_as_if_bravo_were_not_indexed(self):
        tools = read_only_tools()
        self.assertEqual(len(tools), 162)
        differences: list[str] = []
        leaks: list[str] = []
        calls = 0
        for tool in tools:
            for values in self.profiles:
                for args in arguments(tool, values):
                    calls += 1
                    answer = normalized(self.tool(self.scoped, tool.name, args, TOKEN))
                    alone = normalized(self.tool(self.reference, tool.name, args, TOKEN))
                    if answer != alone:
                        differences.append(f"{tool.name} {args}")
                    if values is self.alpha:
                        unscoped = normalized(self.tool(self.unscoped, tool.name, args, None))
                        if answer != unscoped:
                            differences.append(f"{tool.name} {args} (unscoped)")
                    found = self.leaked(answer, args)
                    if found:
                        leaks.append(f"{tool.name} {args}: {found[:3]}")
        self.assertGreater(calls, 162 * len(self.profiles))
        self.assertEqual(leaks, [])
        self.assertEqual(differences, [])

    def request(self, resource: Any, route: Route, token: str | None) -> tuple[int, str]:
        dispatcher = InProcessDispatcher(resource, Clock(), timeout=60)
        authorization = f"Bearer {token}".encode() if token else None
        response = self.successResultOf(dispatcher.request(route, authorization))
        return response.status, normalized(json.loads(response.body or b"null"))

    def test_every_route_answers_alpha_only_as_if_bravo_were_not_indexed(self):
        differences: list[str] = []
        leaks: list[str] = []
        for spec in load_route_map():
            if spec.relative_path is None:
                continue
            for values in self.profiles:
                path = re.sub(
                    r"\{(\w+)\}",
                    lambda m, v=values: str(
                        v["entity_id"]
                        if "id" in m.group(1) and "repo" not in m.group(1)
                        else v["repo_id"]
                    ),
                    spec.path,
                )
                for given in ({}, {"repo_id": values["repo_id"]}):
                    query = given if spec.method == "GET" else {}
                    body = given if spec.method != "GET" else None
                    route = Route(spec.method, path, query, body)
                    scoped = self.request(self.scoped, route, TOKEN)
                    if scoped != self.request(self.reference, route, TOKEN):
                        differences.append(f"{spec.method} {path} {given}")
                    if values is self.alpha and scoped != self.request(self.unscoped, route, None):
                        differences.append(f"{spec.method} {path} {given} (unscoped)")
                    found = self.leaked(scoped[1], [path, given])
                    if found:
                        leaks.append(f"{spec.method} {path} {given}: {found[:3]}")
        self.assertEqual(leaks, [])
        self.assertEqual(differences, [])


class GrantedReaderTests(SynchronousTestCase):
    """The shadow views themselves: what a granted connection can count and find."""

    def setUp(self):
        base = Path(self.mktemp())
        base.mkdir()
        self.db = str(base / "index.sqlite")
        alpha = work_tree(base / "alpha", {"a.py": "def a_fn():\n    return 1\n"})
        bravo = work_tree(base / "bravo", {"b.py": "def b_fn():\n    return a_fn()\n"})
        self.assertTrue(index_repositories(self.db, [str(alpha), str(bravo)], workers=1).ok)
        self.conn = shadow(open_reader(self.db))
        self.addCleanup(self.conn.close)
        ids = dict(self.conn.execute("SELECT name, repo_id FROM main.repositories").fetchall())
        self.alpha, self.bravo = ids["alpha"], ids["bravo"]

    def test_granted_reader_counts_and_finds_only_granted_repositories(self):
        grant(self.conn, Principal(mode=SCOPED, allowed_repository_ids=(self.alpha,)))
        for table in ("repositories", "files", "entities", "generations", "entity_rows"):
            total = self.conn.execute(f"SELECT COUNT(*) FROM main.{table}").fetchone()[0]
            seen = self.conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
            self.assertLess(seen, total, table)
        names = {r[0] for r in self.conn.execute("SELECT entity_name FROM entities")}
        self.assertEqual(names, {"a_fn"})

    def test_grants_change_with_each_caller_on_one_connection(self):
        grant(self.conn, Principal(mode=SCOPED, allowed_repository_ids=(self.bravo,)))
        self.assertEqual(
            [r[0] for r in self.conn.execute("SELECT repo_id FROM repositories")], [self.bravo]
        )
        grant(self.conn, Principal(mode=SCOPED))
        self.assertEqual(self.conn.execute("SELECT COUNT(*) FROM files").fetchone()[0], 0)

    def test_a_table_a_later_schema_adds_is_shadowed_by_its_repo_id_or_file_id(self):
        writer = sqlite3.connect(self.db)
        writer.executescript(
            "CREATE TABLE topic_rows (repo_id TEXT, topic TEXT);"
            "CREATE TABLE topic_files (file_id INTEGER, topic TEXT);"
            "CREATE TABLE vocabulary (word TEXT);"
        )
        for repo_id in (self.alpha, self.bravo):
            writer.execute("INSERT INTO topic_rows VALUES (?, 'fees')", (repo_id,))
        writer.execute("INSERT INTO topic_files SELECT file_id, 'fees' FROM files")
        writer.execute("INSERT INTO vocabulary VALUES ('fees')")
        writer.commit()
        writer.close()
        conn = shadow(open_reader(self.db))
        self.addCleanup(conn.close)
        grant(conn, Principal(mode=SCOPED, allowed_repository_ids=(self.alpha,)))
        self.assertEqual(
            [r[0] for r in conn.execute("SELECT repo_id FROM topic_rows")], [self.alpha]
        )
        files = conn.execute("SELECT COUNT(*) FROM topic_files").fetchone()[0]
        self.assertEqual(files, conn.execute("SELECT COUNT(*) FROM files").fetchone()[0])
        self.assertLess(files, conn.execute("SELECT COUNT(*) FROM main.topic_files").fetchone()[0])
        self.assertEqual(conn.execute("SELECT COUNT(*) FROM vocabulary").fetchone()[0], 1)

    def test_only_callers_whose_grants_leave_something_out_are_restricted(self):
        self.assertFalse(restricted(None))
        self.assertFalse(restricted(Principal(mode=SCOPED, all_scopes=True)))
        self.assertTrue(restricted(Principal(mode=SCOPED, allowed_repository_ids=("x",))))
