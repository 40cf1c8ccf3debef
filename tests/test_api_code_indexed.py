"""
End-to-end: index a small git repository with the real indexer, then ask the code
routes questions whose answers are known from the source.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.build.indexer import index_repositories
from eshu_mcp.query.local.index.store.database import open_reader
from tests.test_api_code_common import call, scratch_dir

AWS_KEY = "AKIA" + "ABCDEFGHIJKLMNOP"
SOURCES = {
    "pkg/__init__.py": "",
    "pkg/service.py": '''"""Payment service."""
from pkg.helpers import fmt


class Base:
    def run(self):
        return 1


class Child(Base):
    def run(self):
        return fmt(2)


def charge(amount):
    return fmt(amount)


def old_refund():
    return None
''',
    "pkg/helpers.py": """from pkg.service import charge


def fmt(value):
    return str(value)


def uses_service():
    return charge(1)
""",
    "pkg/api.py": """from pkg.service import charge


def create_charge(req):
    if req:
        return charge(req)
    return None
""",
    "config/settings.py": f'AWS_ACCESS_KEY_ID = "{AWS_KEY}"\n',
}


def indexed_repository(
    case: SynchronousTestCase, sources: dict[str, str] = SOURCES, name: str = "payments"
) -> tuple[str, str]:
    """Write ``sources`` into a fresh git repository, index it, return (db path, repo name)."""
    root = Path(scratch_dir(case)) / name
    for relative, text in sources.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_SYSTEM": os.devnull}
    for argv in (
        ["git", "init", "-q"],
        ["git", "add", "-A"],
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "init"],
    ):
        subprocess.run(argv, cwd=root, env=env, check=True, timeout=60)
    db = str(root.parent / "index.sqlite")
    report = index_repositories(db, [str(root)], workers=1)
    case.assertTrue(report.ok, report)
    return db, name


class IndexedCodeRoutesTests(SynchronousTestCase):
    def setUp(self):
        db, self.repo = indexed_repository(self)
        self.conn = open_reader(db)
        self.addCleanup(self.conn.close)

    def test_callers_of_charge_include_create_charge_and_uses_service(self):
        data = call(
            self.conn,
            "/code/relationships/story",
            {"target": "charge", "repo_id": self.repo, "direction": "incoming"},
        ).data
        callers = {r["source_name"] for r in data["relationships"]}
        self.assertEqual(callers, {"create_charge", "uses_service"})
        self.assertEqual(
            {r["resolution_method"] for r in data["relationships"]}, {"import_binding"}
        )

    def test_old_refund_is_public_api_and_overriding_run_is_a_root(self):
        data = call(self.conn, "/code/dead-code/investigate", {"repo_id": self.repo}).data
        ready = {r["name"] for r in data["candidate_buckets"]["cleanup_ready"]}
        ambiguous = {
            r["name"]: r["ambiguity_reasons"] for r in data["candidate_buckets"]["ambiguous"]
        }
        # nothing here calls it, but pkg.service is importable: code elsewhere may
        self.assertEqual(ambiguous["old_refund"], ["python.public_api:pkg.service.old_refund"])
        self.assertNotIn("old_refund", ready)
        self.assertNotIn("charge", ready)
        self.assertNotIn("fmt", ready)
        suppressed = {
            (r["name"], tuple(r["suppression_reasons"]))
            for r in data["candidate_buckets"]["suppressed"]
        }
        self.assertIn(("run", ("modeled_root:python.method_override",)), suppressed)

    def test_importers_of_a_file_path(self):
        data = call(
            self.conn,
            "/code/relationships/story",
            {"target": "pkg/service.py", "direction": "incoming", "relationship_type": "IMPORTS"},
        ).data
        self.assertEqual(data["target_resolution"]["name"], "pkg/service.py")
        importers = {r["source_name"] for r in data["relationships"]}
        self.assertEqual(importers, {"pkg/api.py", "pkg/helpers.py"})

    def test_import_cycle_between_service_and_helpers(self):
        data = call(
            self.conn,
            "/code/imports/investigate",
            {"repo_id": self.repo, "query_type": "file_import_cycles"},
        ).data
        self.assertEqual(
            [c["cycle_path"] for c in data["cycles"]],
            [["pkg/helpers.py", "pkg/service.py", "pkg/helpers.py"]],
        )

    def test_planted_aws_key_is_found_and_redacted(self):
        answer = call(self.conn, "/code/security/secrets/investigate", {"repo_id": self.repo})
        [finding] = answer.data["findings"]
        self.assertEqual(finding["finding_kind"], "aws_access_key")
        self.assertEqual(finding["relative_path"], "config/settings.py")
        self.assertNotIn(AWS_KEY, repr(answer.data))

    def test_complexity_counts_the_branch(self):
        data = call(self.conn, "/code/complexity", {"function_name": "create_charge"}).data
        self.assertEqual(data["complexity"], 2)
        self.assertEqual(data["outgoing_count"], 1)

    def test_call_chain_from_api_to_helpers(self):
        data = call(self.conn, "/code/call-chain", {"start": "create_charge", "end": "fmt"}).data
        self.assertEqual(
            [[n["name"] for n in c["chain"]] for c in data["chains"]],
            [["create_charge", "charge", "fmt"]],
        )
        start, middle, end = data["chains"][0]["chain"]
        self.assertNotIn("called_at_line", start)
        self.assertEqual(
            (middle["called_at_line"], middle["resolution_method"]), (6, "import_binding")
        )
        self.assertEqual((end["called_at_line"], end["resolution_method"]), (16, "import_binding"))

    def test_an_empty_call_chain_says_why(self):
        missing = call(self.conn, "/code/call-chain", {"start": "Base.nothing", "end": "fmt"}).data
        self.assertEqual(missing["chains"], [])
        self.assertIn('no definition is named "Base.nothing" (start)', missing["reason"])
        backwards = call(self.conn, "/code/call-chain", {"start": "fmt", "end": "charge"}).data
        self.assertEqual(backwards["chains"], [])
        self.assertIn("both ends are indexed", backwards["reason"])
        self.assertIn("at most 5 linked calls", backwards["reason"])

    def test_symbol_search_and_class_hierarchy(self):
        data = call(self.conn, "/code/symbols/search", {"symbol": "charge"}).data
        self.assertEqual([r["relative_path"] for r in data["results"]], ["pkg/service.py"])
        self.assertIn("def charge(amount)", data["results"][0]["source_cache"])
        story = call(
            self.conn,
            "/code/relationships/story",
            {"target": "Child", "query_type": "class_hierarchy", "direction": "both"},
        ).data
        self.assertEqual([a["name"] for a in story["class_hierarchy"]["ancestors"]], ["Base"])

    def test_importers_of_the_service_module(self):
        data = call(
            self.conn,
            "/code/relationships/story",
            {"target": "pkg.service", "direction": "incoming", "relationship_type": "IMPORTS"},
        ).data
        importers = {r["source_name"] for r in data["relationships"]}
        self.assertEqual(importers, {"pkg/api.py", "pkg/helpers.py"})
