"""
The official MCP conformance suite and Inspector CLI against the real daemon.

Both are Node programs installed (pinned) by ``scripts/mcp-node-tools.sh`` from the npm
registry; when that registry cannot be reached the tests are skipped with the reason.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from eshu_mcp.catalog import load_contract
from tests.daemon import (
    PROJECT_ROOT,
    child_environment,
    indexed_daemon_args,
    serving,
)

TOOLS = PROJECT_ROOT / "scripts" / "mcp-node-tools.sh"
BASELINE = Path(__file__).with_name("conformance-baseline.yml")


@pytest.fixture(scope="module")
def node_tools():
    installed = subprocess.run(
        ["bash", str(TOOLS), "--install"], capture_output=True, text=True, timeout=600
    )
    if installed.returncode != 0:
        pytest.skip(f"MCP node tools could not be installed: {installed.stderr[-500:]}")
    return TOOLS


def run_tool(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", str(TOOLS), *args], capture_output=True, text=True, timeout=timeout
    )


@pytest.fixture(scope="module")
def daemon(workdir, repository):
    with serving(workdir, indexed_daemon_args(workdir, repository)) as server:
        yield server


def test_conformance_suite_passes_all_but_fixture_scenarios(node_tools, daemon, workdir):
    outcome = run_tool(
        "conformance",
        "server",
        "--url",
        daemon.url + "/mcp",
        "--expected-failures",
        str(BASELINE),
        "-o",
        str(workdir / "conformance"),
    )
    report = outcome.stdout[-4000:] + outcome.stderr[-2000:]
    assert outcome.returncode == 0, report
    assert "Baseline check passed" in report or "0 failed" in report, report


def inspect(*args: str) -> dict:
    outcome = run_tool("inspector", "--cli", *args, "--format", "json", timeout=120)
    assert outcome.returncode == 0, outcome.stdout[-2000:] + outcome.stderr[-2000:]
    return json.loads(outcome.stdout)["result"]


CONTRACT_NAMES = [tool["name"] for tool in load_contract()]


@pytest.mark.parametrize("endpoint", ["/mcp", "/sse"])
def test_inspector_lists_every_tool_over_http(node_tools, daemon, endpoint):
    listing = inspect(daemon.url + endpoint, "--method", "tools/list")
    assert [tool["name"] for tool in listing["tools"]] == CONTRACT_NAMES


def test_inspector_calls_a_tool_in_the_stateless_revision(node_tools, daemon):
    result = inspect(
        daemon.url + "/mcp",
        "--protocol-era",
        "modern",
        "--method",
        "tools/call",
        "--tool-name",
        "find_code",
        "--tool-arg",
        "query=parse_config",
    )
    assert "parse_config" in json.dumps(result["structuredContent"])


def test_inspector_over_stdio(node_tools, workdir, repository):
    launcher = workdir / "eshu-mcp-stdio.sh"
    env = child_environment(workdir)
    launcher.write_text(
        "#!/bin/sh\n"
        f"export PYTHONPATH='{env['PYTHONPATH']}' ESHU_HOME='{env['ESHU_HOME']}'\n"
        f"exec {sys.executable} -m eshu_mcp.cli stdio --repo {repository} "
        f"--db {workdir / 'stdio.sqlite'} --toolsets all\n"
    )
    launcher.chmod(0o755)
    outcome = subprocess.run(
        [
            "bash",
            str(TOOLS),
            "inspector",
            "--cli",
            str(launcher),
            "--method",
            "tools/call",
            "--tool-name",
            "find_code",
            "--tool-arg",
            "query=parse_config",
            "--format",
            "json",
        ],
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
        cwd=workdir,
    )
    assert outcome.returncode == 0, outcome.stderr[-2000:]
    assert "parse_config" in outcome.stdout
