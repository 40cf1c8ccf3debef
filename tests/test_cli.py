"""The ``eshu-mcp`` command: stdio lifecycle, one-shot calls, usage errors."""

import json
import signal
import subprocess
import sys

from tests.daemon import child_environment

PYTHON = [sys.executable, "-m", "eshu_mcp.cli"]


def run(workdir, *args, stdin=b"", timeout=120, cwd=None):
    return subprocess.run(
        [*PYTHON, *args],
        input=stdin,
        capture_output=True,
        timeout=timeout,
        env=child_environment(workdir),
        cwd=cwd or workdir,
    )


def test_stdio_answers_then_exits_cleanly_at_end_of_input(workdir, repository):
    lines = (
        b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}\n'
        b'{"jsonrpc":"2.0","id":2,"method":"tools/call",'
        b'"params":{"name":"find_symbol","arguments":{"symbol":"forgotten_helper"}}}\n'
        b'{"jsonrpc":"2.0","id":3,"method":"tools/call",'
        b'"params":{"name":"get_repo_summary","arguments":{}}}'
    )
    db = str(workdir / "stdio.sqlite")
    done = run(workdir, "stdio", "--repo", str(repository), "--db", db, stdin=lines)
    assert done.returncode == 0, done.stderr.decode()
    replies = {reply["id"]: reply for reply in map(json.loads, done.stdout.splitlines())}
    assert sorted(replies) == [1, 2, 3]  # calls answer as they finish
    assert "forgotten_helper" in json.dumps(replies[2]["result"]["structuredContent"])
    # one --repo: a tool that takes a repository uses it when none is given
    assert not replies[3]["result"].get("isError"), replies[3]["result"]["content"]
    assert repository.name in replies[3]["result"]["content"][0]["text"]
    assert b"mcp server started on stdio" in done.stderr


def test_stdio_exits_cleanly_on_sigterm(workdir):
    process = subprocess.Popen(
        [*PYTHON, "stdio", "--db", str(workdir / "empty.sqlite")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=child_environment(workdir),
        cwd=workdir,
    )
    process.stdin.write(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n')
    process.stdin.flush()
    assert json.loads(process.stdout.readline()) == {"jsonrpc": "2.0", "id": 1, "result": {}}
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=30) == 0
    process.stdin.close()
    process.stdout.close()
    process.stderr.close()


def test_stdio_serves_the_core_tools_by_default(workdir):
    lines = (
        b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}\n'
        b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}\n'
        b'{"jsonrpc":"2.0","id":3,"method":"tools/call",'
        b'"params":{"name":"find_code","arguments":{"query":"anything"}}}'
    )
    done = run(workdir, "stdio", "--db", str(workdir / "core.sqlite"), stdin=lines)
    assert done.returncode == 0, done.stderr.decode()
    replies = {reply["id"]: reply for reply in map(json.loads, done.stdout.splitlines())}
    listed = [tool["name"] for tool in replies[2]["result"]["tools"]]
    assert "find_symbol" in listed and "analyze_code_relationships" in listed
    assert "find_code" not in listed
    assert replies[3]["result"]["isError"] is True


def test_call_prints_one_tool_result(workdir, repository):
    db = str(workdir / "call.sqlite")
    indexed = run(workdir, "index", str(repository), "--db", db)
    assert indexed.returncode == 0, indexed.stderr.decode()
    done = run(workdir, "call", "--db", db, "find_code", '{"query": "write_row"}')
    assert done.returncode == 0, done.stderr.decode()
    result = json.loads(done.stdout)
    assert "write_row" in json.dumps(result["structuredContent"])
    assert [block["type"] for block in result["content"]] == ["text"]
    args = ("call", "--db", db, "--answer-detail", "full", "find_code", '{"query": "write_row"}')
    full = json.loads(run(workdir, *args).stdout)
    assert json.loads(full["content"][1]["resource"]["text"]) == full["structuredContent"]
    assert (
        full["structuredContent"]["data"]["matches"] == full["structuredContent"]["data"]["results"]
    )


def test_call_inside_an_indexed_repository_is_about_that_repository(workdir, repository):
    db = str(workdir / "here.sqlite")
    assert run(workdir, "index", str(repository), "--db", db).returncode == 0
    inside = run(workdir, "call", "--db", db, "get_repo_summary", "{}", cwd=repository)
    assert inside.returncode == 0, inside.stdout.decode()
    assert repository.name in json.loads(inside.stdout)["content"][0]["text"]
    outside = run(workdir, "call", "--db", db, "get_repo_summary", "{}")
    assert outside.returncode == 1
    assert "repo_id or repo_name is required" in outside.stdout.decode()


def test_usage_errors_are_one_clear_line_and_exit_2(workdir):
    done = run(workdir, "stdio", "--dispatch-timeout", "-1")
    assert done.returncode == 2
    assert b"--dispatch-timeout must be a positive number of seconds" in done.stderr
    done = run(workdir, "frobnicate")
    assert done.returncode == 2
    assert b"unknown command 'frobnicate'" in done.stderr


def test_version():
    done = subprocess.run([*PYTHON, "version"], capture_output=True, timeout=60)
    assert done.stdout.startswith(b"eshu-mcp-server ")


def test_call_refuses_arguments_the_schema_refuses(workdir):
    done = run(workdir, "call", "--db", str(workdir / "empty.sqlite"), "find_code", '{"query": 1}')
    assert done.returncode == 1, done.stderr.decode()
    result = json.loads(done.stdout)
    assert result["content"][0]["text"] == "query must be a string, but the number 1 was given."


def _plain_repository(parent, name: str, function: str):
    repo = parent / name
    (repo / "pkg").mkdir(parents=True, exist_ok=True)
    (repo / "pkg" / "mod.py").write_text(f"def {function}(value):\n    return value\n")
    return repo


def test_call_inside_a_repository_answers_for_it_and_says_so(workdir):
    alpha = _plain_repository(workdir, "call-alpha", "alpha_only_function")
    beta = _plain_repository(workdir, "call-beta", "beta_only_function")
    db = str(workdir / "two.sqlite")
    assert run(workdir, "index", str(alpha), str(beta), "--db", db).returncode == 0

    def names(cwd, query):
        done = subprocess.run(
            [*PYTHON, "call", "--db", db, "find_code", json.dumps({"query": query})],
            capture_output=True,
            timeout=120,
            env=child_environment(workdir),
            cwd=cwd,
        )
        return json.dumps(json.loads(done.stdout)["structuredContent"]), done.stderr.decode()

    found, said = names(alpha / "pkg", "only_function")
    assert "alpha_only_function" in found and "beta_only_function" not in found
    assert "answering for the repository here: call-alpha" in said
    found, said = names(workdir, "only_function")
    assert "alpha_only_function" in found and "beta_only_function" in found
    assert "answering from every repository in the index" in said


def test_call_whose_reader_went_away_exits_at_once(workdir, repository):
    db = str(workdir / "reader-gone.sqlite")
    assert run(workdir, "index", str(repository), "--db", db).returncode == 0
    arguments = ["--answer-detail", "full", "--response-budget", "4000000"]
    process = subprocess.Popen(
        [*PYTHON, "call", "--db", db, *arguments, "find_code", '{"query": "_", "limit": 200}'],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=child_environment(workdir),
        cwd=workdir,
    )
    process.stdout.close()  # the reader is gone before the answer is written (| head -c 0)
    try:
        code = process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert code == 141
