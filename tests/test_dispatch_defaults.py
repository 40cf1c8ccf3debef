"""
A server scoped to one repository answers calls that name none about that repository;
a call that names one, or a server over several, is left as it was.
"""

from __future__ import annotations

from pathlib import Path

from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.dispatch import run_read_only_tool
from eshu_mcp.dispatch.defaults import with_default_repository
from eshu_mcp.query.local.api.platform.resource import LocalQueryResource
from tests.test_api_code_indexed import indexed_repository
from tests.test_api_resource import InlinePool, ThreadReactor


def test_the_tools_repository_argument_is_filled_when_none_is_given():
    assert with_default_repository("get_repo_summary", {}, "/r") == {"repo_id": "/r"}
    assert with_default_repository("get_changed_since", {}, "/r") == {"repository": "/r"}
    assert with_default_repository("list_codeowners_ownership", {}, "/r") == {"repository_id": "/r"}
    assert with_default_repository("get_file_lines", {"relative_path": "a.py"}, "/r") == {
        "relative_path": "a.py",
        "repo_id": "/r",
    }


def test_a_call_that_says_which_repository_or_scope_is_left_alone():
    for tool, args in (
        ("get_repo_summary", {"repo_name": "payments"}),
        ("get_changed_since", {"scope_id": "git-repository-scope://x"}),
        ("find_symbol", {"symbol": "x", "repo_id": "other"}),
    ):
        assert with_default_repository(tool, args, "/r") == args


def test_without_one_repository_nothing_changes():
    assert with_default_repository("get_repo_summary", {}, "") == {}
    assert with_default_repository("list_indexed_repositories", {}, "/r") == {}
    # relationship and content search already read the server's repositories
    args = {"query_type": "find_cross_repo_callers", "target": "x"}
    assert with_default_repository("analyze_code_relationships", args, "/r") == args


class OneRepositoryTests(SynchronousTestCase):
    def setUp(self):
        self.db, self.name = indexed_repository(self)
        self.root = Path(self.db).parent / self.name

    def ask(self, tool: str, args: dict, home: str) -> dict:
        resource = LocalQueryResource(
            self.db, reactor=ThreadReactor(), threadpool=InlinePool(), home_paths=(home,)
        )
        result = self.successResultOf(
            run_read_only_tool(resource, tool, args, clock=Clock(), default_repository=home)
        )
        self.assertFalse(result.get("isError"), result["content"][0]["text"])
        return result

    def test_summary_story_freshness_and_changes_need_no_repository(self):
        for tool in ("get_repo_summary", "get_repo_story", "get_repository_freshness"):
            text = self.ask(tool, {}, str(self.root))["content"][0]["text"]
            self.assertIn("payments", text)
        text = self.ask("get_changed_since", {}, str(self.root))["content"][0]["text"]
        self.assertIn("files: no changes", text)

    def test_a_folder_inside_the_repository_scopes_to_it(self):
        folder = str(self.root / "pkg")
        result = self.ask("get_file_content", {"relative_path": "pkg/api.py"}, folder)
        self.assertIn("def create_charge(req):", result["content"][0]["text"])
