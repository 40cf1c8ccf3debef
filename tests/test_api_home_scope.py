"""
A daemon started with ``--repo`` answers questions that name no repository from its own
repositories only (the shared index may hold others, even deleted ones); a question that
names another repository still gets it, and ``--whole-index`` serves every repository.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.build.indexer import index_repositories
from eshu_mcp.query.local.index.store.database import open_reader
from eshu_mcp.tap import Options
from tests.test_api_code_common import call

SOURCE = "def shared_name(value):\n    return value\n"


def git_repository(parent: Path, name: str) -> Path:
    repo = parent / name
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "lib.py").write_text(SOURCE)
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", "-C", str(repo)]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "init"], check=True)
    return repo


class HomeScopeTests(SynchronousTestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = Path(tempfile.mkdtemp(prefix="eshu-home-scope-"))
        cls.alpha = git_repository(cls.tmp, "alpha")
        cls.beta = git_repository(cls.tmp, "beta")
        cls.db = cls.tmp / "index.sqlite"
        report = index_repositories(cls.db, [cls.alpha, cls.beta], workers=1)
        cls.ids = {Path(r.path).name: r.repo_id for r in report.repositories}
        cls.conn = open_reader(cls.db)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.conn.close()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def symbol_repositories(self, home: tuple[str, ...], **body) -> set[str]:
        from eshu_mcp.query.local.api.platform import framework

        route = framework.ROUTES.find("POST", "/code/symbols/search")
        ctx = framework.ApiContext(
            self.conn, "POST", {}, {}, {"symbol": "shared_name", **body}, True, home_paths=home
        )
        return {row["repo_id"] for row in route.handler(ctx).data["results"]}

    def test_an_unscoped_question_reads_only_the_daemons_repositories(self) -> None:
        self.assertEqual(self.symbol_repositories((str(self.alpha),)), {self.ids["alpha"]})

    def test_a_folder_inside_a_repository_scopes_to_that_repository(self) -> None:
        home = (str(self.beta / "pkg"),)
        self.assertEqual(self.symbol_repositories(home), {self.ids["beta"]})

    def test_naming_another_repository_still_answers_from_it(self) -> None:
        found = self.symbol_repositories((str(self.alpha),), repo_id=self.ids["beta"])
        self.assertEqual(found, {self.ids["beta"]})

    def test_without_home_paths_every_repository_answers(self) -> None:
        self.assertEqual(self.symbol_repositories(()), set(self.ids.values()))

    def test_content_search_is_scoped_the_same_way(self) -> None:
        answer = call(self.conn, "/content/entities/search", {"query": "shared_name"})
        self.assertEqual(len(answer.data["results"]), 2)
        from eshu_mcp.query.local.api.platform import framework

        route = framework.ROUTES.find("POST", "/content/entities/search")
        ctx = framework.ApiContext(
            self.conn, "POST", {}, {}, {"query": "shared_name"}, True, home_paths=(str(self.beta),)
        )
        results = route.handler(ctx).data["results"]
        self.assertEqual({row["repo_id"] for row in results}, {self.ids["beta"]})


class HomeFreshnessTests(SynchronousTestCase):
    def test_a_missing_repository_elsewhere_does_not_make_home_answers_stale(self) -> None:
        from eshu_mcp.query.local.api.platform import framework

        tmp = Path(tempfile.mkdtemp(prefix="eshu-home-fresh-"))
        self.addCleanup(shutil.rmtree, tmp, True)
        home, elsewhere = git_repository(tmp, "home"), git_repository(tmp, "elsewhere")
        index_repositories(tmp / "index.sqlite", [home, elsewhere], workers=1)
        shutil.rmtree(elsewhere)
        conn = open_reader(tmp / "index.sqlite")
        self.addCleanup(conn.close)

        def state(home_paths: tuple[str, ...]) -> str:
            ctx = framework.ApiContext(conn, "POST", {}, {}, {}, True, home_paths=home_paths)
            return ctx.freshness()["state"]

        self.assertEqual(state((str(home),)), "fresh")
        self.assertEqual(state(()), "stale")  # the whole index holds a missing repository


class WholeIndexOptionTests(SynchronousTestCase):
    def backend(self, *argv: str):
        from twisted.application.service import MultiService

        from eshu_mcp.service import build_backend

        options = Options()
        options.parseOptions(["--db", str(self.db), *argv])
        return build_backend(options.backend_settings(), reactor=Clock(), parent=MultiService())

    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="eshu-whole-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.db = self.tmp / "index.sqlite"

    def test_a_daemon_with_repos_scopes_to_them_by_default(self) -> None:
        backend = self.backend("--repo", str(self.tmp))
        self.assertEqual(backend.home_paths, (str(self.tmp.resolve()),))

    def test_whole_index_serves_every_repository(self) -> None:
        backend = self.backend("--repo", str(self.tmp), "--whole-index")
        self.assertEqual(backend.home_paths, ())

    def test_without_repos_nothing_is_scoped(self) -> None:
        self.assertEqual(self.backend().home_paths, ())
