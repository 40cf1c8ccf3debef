"""
The fixture repository's known facts, asked through MCP tools over a real transport.

The daemon indexes ``tests/fixtures/polyglot`` (copied into a fresh git repository)
and watches it; the official SDK client asks over Streamable HTTP. After an edit is
committed the watcher re-indexes, and ``get_changed_since`` names the edited file.
"""

import json
import subprocess
import time
from pathlib import Path

import pytest

from tests.daemon import serving
from tests.mcp_session import committed_copy, session_calls

FIXTURE = Path(__file__).with_name("fixtures") / "polyglot"
GIT = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]


@pytest.fixture(scope="module")
def repository(workdir):
    return committed_copy(FIXTURE, workdir / "polyglot")


@pytest.fixture(scope="module")
def daemon(workdir, repository):
    args = ["--repo", str(repository), "--db", str(workdir / "index.sqlite"), "--watch"]
    with serving(workdir, [*args, "--toolsets", "all"]) as server:
        yield server


def ask(daemon, calls):
    """Run ``calls`` (name, arguments) in one session; return their results."""
    return session_calls(daemon.url + "/mcp", calls, list_tools=False)[1]


def text_of(result) -> str:
    assert not result.is_error, result.content[0].text
    return json.dumps(result.structured_content)


def test_known_facts_come_back_through_mcp(daemon, repository):
    repo = str(repository)
    callers, callees, chain, dead, hierarchy, cycles, secrets = ask(
        daemon,
        [
            ("analyze_code_relationships", {"query_type": "find_callers", "target": "compute_fee"}),
            (
                "analyze_code_relationships",
                {"query_type": "find_callees", "target": "create_charge"},
            ),
            ("find_function_call_chain", {"start": "create_charge", "end": "compute_fee"}),
            ("find_dead_code", {"limit": 100}),
            (
                "analyze_code_relationships",
                {"query_type": "class_hierarchy", "target": "PaymentService"},
            ),
            (
                "investigate_import_dependencies",
                {"query_type": "file_import_cycles", "repo_id": repo},
            ),
            ("investigate_hardcoded_secrets", {}),
        ],
    )
    assert "charge" in text_of(callers)
    assert "PaymentService" in text_of(callees)
    chain_text = text_of(chain)
    assert "create_charge" in chain_text and "compute_fee" in chain_text
    assert "unused_helper" in text_of(dead)
    assert "BaseService" in text_of(hierarchy)
    cycle_text = text_of(cycles)
    assert "cycle_a.py" in cycle_text and "cycle_b.py" in cycle_text
    secret_text = text_of(secrets)
    assert "settings.env" in secret_text
    assert "AKIAQ3ZT7WXR2NLF4KDM" not in secret_text


def test_changed_since_names_an_edited_file_after_the_watcher_reindexes(daemon, repository):
    repo = str(repository)
    (before,) = ask(daemon, [("get_generation_lifecycle", {"repository": repo})])
    first = before.structured_content["data"]["generations"][0]["generation_id"]
    fees = repository / "app" / "fees.py"
    fees.write_text(
        fees.read_text() + "\n\ndef refund_fee(amount):\n    return -compute_fee(amount)\n"
    )
    subprocess.run([*GIT, "-C", str(repository), "commit", "-qam", "refund fee"], check=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        (lifecycle,) = ask(daemon, [("get_generation_lifecycle", {"repository": repo})])
        if len(lifecycle.structured_content["data"]["generations"]) > 1:
            break
        time.sleep(0.5)
    else:
        pytest.fail(f"the watcher never re-indexed:\n{daemon.log()}")
    (changed,) = ask(
        daemon, [("get_changed_since", {"repository": repo, "since_generation_id": first})]
    )
    assert "app/fees.py" in text_of(changed)
