"""
End to end: a token granted repository A reads nothing of repository B.

The real daemon (``twistd -n eshu-mcp``) indexes and watches two repositories under a
scoped-token file with two tokens: one granted A only, one granted every scope. The official
MCP Python SDK client drives both over Streamable HTTP. The scoped token's answers name
nothing of B (its names, path or repository id), even when it asks with B's names or id; the
all-scopes token sees B through the same calls, so B's absence is the grant at work. Both
sessions subscribe to the log with ``logging/setLevel`` while B, then A, is re-indexed: the
scoped session hears A's build and never B's.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from eshu_mcp.auth.scoped import token_sha256
from eshu_mcp.query.local.index.store.identity import repository_id
from tests.daemon import make_fixture_repository, serving

ALPHA_TOKEN = "alpha-only-e2e-token"
EVERY_TOKEN = "every-scope-e2e-token"
LOG_WAIT_SECONDS = 90

# logging/setLevel is what this module tests; the SDK warns that the 2026-07-28 revision drops it
pytestmark = pytest.mark.filterwarnings("ignore:The logging capability is deprecated")

BRAVO_FILES = {
    "zqledger/fees.py": (
        "def zq_compute_fee(amount):\n"
        "    return zq_rounding(amount) * 3\n\n\n"
        "def zq_rounding(amount):\n"
        "    return round(amount, 2)\n\n\n"
        "def write_row(settings):\n"
        "    return zq_compute_fee(len(settings))\n"
    ),
    "zqledger/vault.py": (
        "from zqledger.fees import zq_compute_fee\n\n\n"
        "class ZqVault:\n"
        "    def zq_deposit(self, amount):\n"
        "        return zq_compute_fee(amount)\n"
    ),
}
BRAVO_NAMES = ("zq_compute_fee", "zq_rounding", "ZqVault", "zq_deposit", "zqledger", "zqbravo")


def make_bravo(root: Path) -> Path:
    repo = root / "zqbravo-repo"
    for relative, text in BRAVO_FILES.items():
        path = repo / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", "-C", str(repo)]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "init"], check=True)
    return repo


@pytest.fixture(scope="module")
def repositories(workdir):
    alpha = make_fixture_repository(workdir).resolve()
    bravo = make_bravo(workdir).resolve()
    return alpha, bravo


@pytest.fixture(scope="module")
def daemon(workdir, repositories):
    alpha, _ = repositories
    registry = workdir / "scoped-tokens.json"
    entry = {"tenant_id": "t", "workspace_id": "w", "subject_class": "team_token"}
    registry.write_text(
        json.dumps(
            {
                "version": 1,
                "tokens": [
                    {
                        **entry,
                        "token_sha256": token_sha256(ALPHA_TOKEN),
                        "allowed_repository_ids": [repository_id(str(alpha))],
                    },
                    {**entry, "token_sha256": token_sha256(EVERY_TOKEN), "all_scopes": True},
                ],
            }
        )
    )
    args = ["--toolsets", "all", "--watch", "--db", str(workdir / "index.sqlite")]
    for repo in repositories:
        args += ["--repo", str(repo)]
    with serving(workdir, args, ESHU_SCOPED_TOKENS_FILE=str(registry)) as server:
        yield server


def calls(alpha_id: str, bravo_id: str) -> dict[str, tuple[str, dict]]:
    """The calls both tokens make: B's names and id, and a name both repositories define."""
    relationships = {"query_type": "find_callers", "target": "zq_rounding"}
    return {
        "repositories": ("list_indexed_repositories", {}),
        "status": ("get_index_status", {}),
        "bravo_symbol": ("find_symbol", {"symbol": "zq_compute_fee"}),
        "bravo_symbol_by_id": ("find_symbol", {"symbol": "zq_compute_fee", "repo_id": bravo_id}),
        "shared_symbol": ("find_symbol", {"symbol": "write_row"}),
        "bravo_surface": ("find_change_surface", {"target": "zq_compute_fee"}),
        "bravo_callers": ("analyze_code_relationships", relationships),
        "bravo_callers_as_alpha": (
            "analyze_code_relationships",
            {**relationships, "repo_id": alpha_id},
        ),
        "bravo_hierarchy": (
            "analyze_code_relationships",
            {"query_type": "class_hierarchy", "target": "ZqVault"},
        ),
    }


def answer_text(result) -> str:
    """Everything a client reads of one tool result: its blocks and structured content."""
    blocks = [getattr(block, "text", "") or str(block) for block in result.content]
    return "\n".join([*blocks, json.dumps(result.structured_content)])


@contextlib.asynccontextmanager
async def session(url: str, token: str, heard: list[str]):
    client = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)

    async def logged(params) -> None:
        heard.append(str(params.data))

    async with (
        client,
        streamable_http_client(url + "/mcp", http_client=client) as (read, write),
        ClientSession(read, write, logging_callback=logged) as opened,
    ):
        await opened.initialize()
        await opened.set_logging_level("debug")
        yield opened


async def heard_naming(heard: list[str], needle: str) -> None:
    """Wait (bounded) until a log message naming ``needle`` has arrived."""
    with anyio.fail_after(LOG_WAIT_SECONDS):
        while not any(needle in text for text in heard):
            await anyio.sleep(0.1)


@pytest.fixture(scope="module")
def observed(daemon, repositories):
    alpha, bravo = repositories
    alpha_id, bravo_id = repository_id(str(alpha)), repository_id(str(bravo))
    planned = calls(alpha_id, bravo_id)

    async def run():
        scoped_heard: list[str] = []
        every_heard: list[str] = []
        async with (
            session(daemon.url, ALPHA_TOKEN, scoped_heard) as scoped,
            session(daemon.url, EVERY_TOKEN, every_heard) as every,
        ):
            answers = {}
            for key, (name, arguments) in planned.items():
                answers[key] = (
                    await scoped.call_tool(name, arguments),
                    await every.call_tool(name, arguments),
                )
            # B is re-indexed first; once the all-scopes session has heard it, A is: the
            # scoped stream is in order, so a leaked B event would arrive before A's.
            with (bravo / "zqledger" / "fees.py").open("a") as handle:
                handle.write("\n\ndef zq_later_fee():\n    return 4\n")
            await heard_naming(every_heard, str(bravo))
            with (alpha / "app" / "main.py").open("a") as handle:
                handle.write("\n\ndef alpha_later():\n    return 5\n")
            await heard_naming(scoped_heard, str(alpha))
            await heard_naming(every_heard, str(alpha))
        return answers, scoped_heard, every_heard

    answers, scoped_heard, every_heard = anyio.run(run)
    return {
        "answers": answers,
        "scoped_heard": scoped_heard,
        "every_heard": every_heard,
        "alpha": alpha,
        "bravo": bravo,
        "alpha_id": alpha_id,
        "bravo_id": bravo_id,
    }


def bravo_marks(observed) -> tuple[str, ...]:
    return (*BRAVO_NAMES, str(observed["bravo"]), observed["bravo_id"])


def test_the_every_scope_token_sees_b_so_its_absence_below_is_the_grant(observed):
    answers = observed["answers"]
    for key in ("repositories", "bravo_symbol", "bravo_surface", "bravo_callers"):
        assert not answers[key][1].is_error, (key, answer_text(answers[key][1]))
    assert observed["bravo_id"] in answer_text(answers["repositories"][1])
    assert "zqledger/fees.py" in answer_text(answers["bravo_symbol"][1])
    assert "zq_compute_fee" in answer_text(answers["bravo_callers"][1])


@pytest.mark.parametrize(
    "key",
    [
        "repositories",
        "status",
        "bravo_symbol",
        "bravo_symbol_by_id",
        "shared_symbol",
        "bravo_surface",
        "bravo_callers",
        "bravo_callers_as_alpha",
        "bravo_hierarchy",
    ],
)
def test_the_scoped_token_s_answers_name_nothing_of_b(observed, key):
    text = answer_text(observed["answers"][key][0])
    # the answer may echo what was asked; anything else of B is a leak
    _, arguments = calls(observed["alpha_id"], observed["bravo_id"])[key]
    for asked in arguments.values():
        text = text.replace(json.dumps(asked), "").replace(asked, "")
    leaked = [mark for mark in bravo_marks(observed) if mark in text]
    assert leaked == [], text


def test_the_scoped_token_sees_its_own_repository_and_counts_only_it(observed):
    answers = observed["answers"]
    listed = answers["repositories"][0]
    assert not listed.is_error
    assert observed["alpha_id"] in answer_text(listed)
    data = listed.structured_content["data"]
    assert [row["id"] for row in data["repositories"]] == [observed["alpha_id"]]
    assert data["total"] == 1
    everything = answers["repositories"][1].structured_content["data"]
    assert everything["total"] == 2
    shared = answer_text(answers["shared_symbol"][0])
    assert "app/main.py" in shared
    assert "write_row" in shared


def test_the_scoped_log_subscriber_hears_a_s_builds_and_none_of_b(observed):
    assert any(str(observed["alpha"]) in text for text in observed["scoped_heard"])
    assert any(str(observed["bravo"]) in text for text in observed["every_heard"])
    leaked = [
        text
        for text in observed["scoped_heard"]
        if any(mark in text for mark in bravo_marks(observed)) or "2 repositories" in text
    ]
    assert leaked == []
