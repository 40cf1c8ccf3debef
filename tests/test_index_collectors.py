"""
Collected facts never hold a literal secret: a withheld credential file keeps facts about
names and shapes only, and a credential a URL carries is stored redacted.
"""

from __future__ import annotations

import base64
import sqlite3
import subprocess
import tempfile
from pathlib import Path

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.build.indexer import index_repositories
from eshu_mcp.query.local.index.parse.collectors import Collector, Fact, collect_file

SECRET = "Zq9LiteralSecret"

WITHHELD = {
    ".env": f"API_KEY={SECRET}-env\n",
    "docker-compose.yml": (
        "services:\n  web:\n    image: nginx:1.25\n    environment:\n"
        f"      DB_PASSWORD: {SECRET}-compose\n"
    ),
    "k8s/secret.yaml": (
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db-credentials\n"
        f"stringData:\n  password: {SECRET}-k8s\n"
        f"data:\n  token: {base64.b64encode(SECRET.encode()).decode()}\n"
    ),
    ".github/workflows/ci.yml": (
        f"name: ci\non: push\nenv:\n  DEPLOY_TOKEN: {SECRET}-gha\njobs:\n  build:\n"
        f"    runs-on: ubuntu-latest\n    env:\n      NPM_TOKEN: {SECRET}-job\n"
        "    steps:\n      - uses: actions/checkout@v4\n"
    ),
    ".gitlab-ci.yml": (
        f"variables:\n  REGISTRY_PASSWORD: {SECRET}-gitlab\nbuild:\n  image: alpine\n"
        "  script:\n    - make\n"
    ),
    "charts/app/values.yaml": f"password: {SECRET}-helm\n",
}
"""Credential files by name or content: their text is withheld, their facts kept."""

URL_CARRIERS = {
    "requirements.txt": f"privpkg @ git+https://oauth2:{SECRET}-req@gitlab.example.com/t/p.git\n",
    "package.json": (
        '{"name": "web", "dependencies": '
        f'{{"priv": "git+https://{SECRET}-npm:x-oauth-basic@github.com/o/priv.git"}}}}\n'
    ),
    "infra/main.tf": (
        'module "vpc" {\n'
        f'  source = "git::https://deploy:{SECRET}-tf@git.example.com/vpc.git?ref=v1"\n}}\n'
    ),
    "compose.yaml": (
        f"services:\n  api:\n    build:\n      context: https://tok:{SECRET}-ctx@github.com/o/r.git\n"
    ),
}
"""Ordinary manifests (kept as text) whose facts would carry a URL's credentials."""


def git_repository(root: Path, files: dict[str, str]) -> Path:
    repo = root / "repo"
    for relative, text in files.items():
        path = repo / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", "-C", str(repo)]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "init"], check=True)
    return repo


def rows_holding(db_path: Path, needle: str) -> list[tuple[str, str]]:
    """(table, file path or row) of every stored value that contains ``needle``."""
    encoded = base64.b64encode(SECRET.encode()).decode()
    found = []
    with sqlite3.connect(db_path) as db:
        tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for table in tables:
            columns = [row[1] for row in db.execute(f'PRAGMA table_info("{table}")')]
            for row in db.execute(f'SELECT * FROM "{table}"'):
                values = dict(zip(columns, row, strict=True))
                for value in values.values():
                    if isinstance(value, str) and (needle in value or encoded in value):
                        found.append((table, values.get("relative_path") or repr(row)[:80]))
    return found


class CollectedSecretTests(SynchronousTestCase):
    def setUp(self) -> None:
        scratch = Path(tempfile.mkdtemp(prefix="collected-secrets-"))
        self.addCleanup(subprocess.run, ["rm", "-rf", str(scratch)], check=True)
        self.repo = git_repository(scratch, {**WITHHELD, **URL_CARRIERS})
        self.db_path = scratch / "index.sqlite"
        index_repositories(self.db_path, [self.repo], workers=1)

    def test_no_fact_and_no_withheld_file_holds_a_literal_secret(self) -> None:
        holders = rows_holding(self.db_path, SECRET)
        # only the text of the ordinary manifests (served as source is) holds the literal
        self.assertEqual(
            {path for table, path in holders if table in ("files", "files_fts")}
            - set(URL_CARRIERS),
            set(),
        )
        self.assertEqual([row for row in holders if row[0] not in ("files", "files_fts")], [])

    def test_withheld_files_still_have_their_facts_and_redacted_candidates(self) -> None:
        with sqlite3.connect(self.db_path) as db:
            statuses = dict(db.execute("SELECT relative_path, parse_status FROM files"))
            kinds = {row[0] for row in db.execute("SELECT fact_kind FROM artifact_facts")}
            excerpts = [
                row[0] for row in db.execute("SELECT redacted_excerpt FROM secret_candidates")
            ]
            secret_fact = db.execute(
                "SELECT payload FROM artifact_facts WHERE name = 'db-credentials'"
            ).fetchone()
        self.assertEqual(
            {path: statuses[path] for path in WITHHELD}, dict.fromkeys(WITHHELD, "withheld")
        )
        self.assertLessEqual({"compose_service", "k8s_resource", "ci_job"}, kinds)
        self.assertIn('"keys": 2', secret_fact[0])
        self.assertIn("DB_PASSWORD: [REDACTED]", excerpts)

    def test_a_url_s_credentials_are_redacted_in_the_stored_fact(self) -> None:
        with sqlite3.connect(self.db_path) as db:
            payloads = [row[0] for row in db.execute("SELECT payload FROM artifact_facts")]
        stored = "\n".join(payloads)
        self.assertIn("git+https://[REDACTED]@gitlab.example.com/t/p.git", stored)
        self.assertIn("git+https://[REDACTED]@github.com/o/priv.git", stored)
        self.assertIn("git::https://[REDACTED]@git.example.com/vpc.git?ref=v1", stored)
        self.assertIn("https://[REDACTED]@github.com/o/r.git", stored)


class CollectFileTests(SynchronousTestCase):
    def test_a_fact_s_name_and_nested_payload_strings_are_redacted(self) -> None:
        rows = collect_file(
            Collector(
                artifact_type="test",
                collect=lambda path, text: [
                    Fact(
                        "package",
                        f"https://u:{SECRET}@h/p",
                        3,
                        {"sources": [{"url": f"https://h/x?token={SECRET}"}], "count": 2},
                    )
                ],
            ),
            "x",
            "",
        )
        self.assertEqual(
            rows,
            [
                (
                    "package",
                    "https://[REDACTED]@h/p",
                    3,
                    '{"count": 2, "sources": [{"url": "https://h/x?token=[REDACTED]"}]}',
                )
            ],
        )
