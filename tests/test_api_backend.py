"""
Tests for the local backend: IQueryBackend conformance, readiness, the reader pool, and
the whole path from a real git work tree through the indexer to the API answers.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from twisted.trial.unittest import SynchronousTestCase
from zope.interface.verify import verifyObject

from eshu_mcp.query.interfaces import IQueryBackend
from eshu_mcp.query.local.backend import READY_RECHECK_SECONDS, LocalQueryBackend
from eshu_mcp.query.local.index.build.indexer import index_repositories
from tests.test_api_resource import ApiClient, ApiIndex, InlinePool, ThreadReactor

SERVICE = "class PaymentService:\n    def charge(self, amount):\n        return amount\n"
API = (
    "from app.service import PaymentService\n\n\ndef create_charge(req):\n"
    "    return PaymentService().charge(req)\n"
)


def git(tree: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    result = subprocess.run(
        ["git", "-C", str(tree), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return result.stdout.strip()


class DeferredPool:
    """A reader pool stand-in that holds its jobs until the test runs them."""

    def __init__(self) -> None:
        self.jobs: list = []

    def callInThreadWithCallback(self, on_result, func, *args, **kwargs):
        self.jobs.append((on_result, func, args, kwargs))

    def run_all(self) -> None:
        jobs, self.jobs = self.jobs, []
        for on_result, func, args, kwargs in jobs:
            InlinePool().callInThreadWithCallback(on_result, func, *args, **kwargs)


class BackendTests(SynchronousTestCase):
    def setUp(self):
        self.index = ApiIndex(self.mktemp())
        self.repo = self.index.repository("payments")
        self.index.writer.commit()
        self.backend = LocalQueryBackend(self.index.path, reactor=ThreadReactor())

    def test_provides_the_query_backend_interface(self):
        self.assertTrue(verifyObject(IQueryBackend, self.backend))
        self.assertEqual(self.backend.name, "local")

    def test_answers_follow_the_route_map(self):
        answers = self.backend.answers
        self.assertTrue(answers("POST", "/api/v0/code/search"))
        self.assertTrue(answers("get", "/api/v0/repositories/{repo_id}/context"))
        self.assertTrue(answers("GET", "/api/v0/capabilities"))
        self.assertTrue(answers("GET", "/api/v0/kubernetes/correlations"))
        self.assertFalse(answers("GET", "/api/v0/images/tag-history"))
        self.assertFalse(answers("POST", "/api/v0/code/cypher"))
        self.assertFalse(answers("GET", "/api/v0/nothing"))

    def inline_backend(self, db_path: str, **kwargs) -> LocalQueryBackend:
        """A backend whose reader pool runs each job at once (the look is synchronous)."""
        return LocalQueryBackend(
            db_path, reactor=ThreadReactor(), threadpool=InlinePool(), **kwargs
        )

    def test_ready_needs_an_active_generation(self):
        backend = self.inline_backend(self.index.path)
        self.assertTrue(self.successResultOf(backend.check_readiness()))
        self.assertTrue(backend.ready())
        empty = self.inline_backend(str(Path(self.mktemp()) / "none.sqlite"))
        self.assertFalse(self.successResultOf(empty.check_readiness()))
        self.assertFalse(empty.ready())

    def test_readiness_is_answered_from_memory(self):
        reactor = ThreadReactor()
        pool = DeferredPool()
        backend = LocalQueryBackend(self.index.path, reactor=reactor, threadpool=pool)
        self.assertFalse(backend.ready())  # not looked yet: the look is queued on the pool
        self.assertEqual(len(pool.jobs), 1)
        backend.ready()
        self.assertEqual(len(pool.jobs), 1)  # one look at a time
        pool.run_all()
        self.assertTrue(backend.ready())
        self.assertEqual(pool.jobs, [])  # a fresh answer needs no look
        reactor.advance(READY_RECHECK_SECONDS)
        self.assertTrue(backend.ready())
        self.assertEqual(len(pool.jobs), 1)  # a stale one schedules a look, answers meanwhile

    def test_a_committed_generation_makes_it_ready_at_once(self):
        class Indexer:
            state = "building"

            def subscribe(self, listener):
                self.listener = listener

        indexer = Indexer()
        backend = LocalQueryBackend(
            str(Path(self.mktemp()) / "none.sqlite"),
            reactor=ThreadReactor(),
            threadpool=DeferredPool(),
            index_service=indexer,
        )
        waiting = backend.when_ready()
        self.assertFalse(backend.ready())
        indexer.listener({"phase": "parse", "done": 1, "total": 2})
        self.assertNoResult(waiting)
        indexer.listener({"phase": "committed"})
        self.assertTrue(backend.ready())
        self.assertTrue(self.successResultOf(waiting))

    def test_a_look_older_than_a_commit_does_not_undo_it(self):
        pool = DeferredPool()
        backend = LocalQueryBackend(
            str(Path(self.mktemp()) / "none.sqlite"), reactor=ThreadReactor(), threadpool=pool
        )
        looking = backend.check_readiness()
        backend.mark_ready()
        pool.run_all()  # the look saw no index file, but the commit came after it began
        self.assertTrue(self.successResultOf(looking))
        self.assertTrue(backend.ready())

    def test_index_service_can_vouch_for_readiness(self):
        class Indexer:
            def ready(self):
                return True

        empty = LocalQueryBackend(
            str(Path(self.mktemp()) / "none.sqlite"), reactor=None, index_service=Indexer()
        )
        self.assertTrue(empty.ready())

    def test_reader_pool_starts_and_stops_with_the_service(self):
        self.backend.startService()
        self.assertTrue(self.backend.threadpool.started)
        self.assertEqual(self.backend.threadpool.max, 2)
        self.backend.stopService()
        self.assertFalse(self.backend.threadpool.started)


class IndexedWorkTreeTests(SynchronousTestCase):
    """The indexer's real output, served by the real Resource."""

    def setUp(self):
        root = Path(self.mktemp())
        self.tree = root / "payments"
        (self.tree / "app").mkdir(parents=True)
        (self.tree / "app" / "service.py").write_text(SERVICE)
        (self.tree / "app" / "api.py").write_text(API)
        self.secret = root / "secret.txt"
        self.secret.write_text("TOP SECRET\n")
        os.symlink(self.secret, self.tree / "app" / "leak.txt")
        git(self.tree, "init", "-q", "-b", "main")
        git(self.tree, "add", "-A")
        git(self.tree, "commit", "-q", "-m", "first")
        self.db = str(root / "index.sqlite")
        report = index_repositories(self.db, [self.tree], workers=1)
        self.assertTrue(report.ok)
        self.client = ApiClient(self, self.db)

    def test_repository_and_file_content_are_served(self):
        repos = self.client.get("/repositories").json()["repositories"]
        self.assertEqual([r["name"] for r in repos], ["payments"])
        data = self.client.post(
            "/content/files/read", {"repo_id": "payments", "relative_path": "app/api.py"}
        ).json()
        self.assertEqual(data["content"], API)
        self.assertEqual(data["commit_sha"], git(self.tree, "rev-parse", "HEAD"))

    def test_entities_from_the_parser_resolve_and_read(self):
        resolved = self.client.post(
            "/entities/resolve", {"name": "charge", "repo_id": "payments"}
        ).json()
        entity_id = resolved["entities"][0]["id"]
        source = self.client.post("/content/entities/read", {"entity_id": entity_id}).json()
        self.assertIn("return amount", source["source_cache"])

    def test_symlink_out_of_the_tree_is_never_served(self):
        for route in ("/content/files/read", "/content/files/lines"):
            response = self.client.post(
                route, {"repo_id": "payments", "relative_path": "app/leak.txt"}
            )
            self.assertEqual(response.status, 404)
            self.assertNotIn(b"TOP SECRET", response.body)
        content = self.client.get("/repositories/payments/content", params={"path": "app/leak.txt"})
        self.assertEqual(content.status, 404)
        search = self.client.post("/content/files/search", {"query": "TOP SECRET"}).json()
        self.assertEqual(search["results"], [])

    def test_new_commit_makes_answers_stale_until_reindexed(self):
        truth = self.client.get("/repositories", envelope=True).json()["truth"]
        self.assertEqual(truth["freshness"]["state"], "fresh")
        (self.tree / "app" / "service.py").write_text(SERVICE + "\n\ndef refund():\n    pass\n")
        git(self.tree, "commit", "-q", "-am", "second")
        stale = self.client.get("/repositories/payments/stats", envelope=True).json()
        self.assertEqual(stale["truth"]["freshness"]["state"], "stale")
        first = self.client.get("/freshness/generations", params={"repository": "payments"}).json()[
            "generations"
        ][0]["generation_id"]
        self.assertTrue(index_repositories(self.db, [self.tree], workers=1).ok)
        fresh = self.client.get("/repositories/payments/freshness", envelope=True).json()
        self.assertEqual(fresh["data"]["verdict"], "current")
        delta = self.client.get(
            "/freshness/changed-since",
            params={"repository": "payments", "since_generation_id": first},
        ).json()
        files = delta["categories"][0]
        self.assertEqual(files["counts"]["updated"], 1)
        self.assertEqual(
            files["samples"]["updated"][0]["stable_fact_key"],
            f"file:{delta['repository']}:app/service.py",
        )
