"""Headless runs (the CLI's `main`, in this process) with MCP servers that fail, hang or write noise, `--mcp-config`, the prompt
from stdin, flags accepted for Claude Code compatibility, and the cost of a model of unknown price."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.cli_in_process import run_in_process
from tests.fake_messages_api import FakeMessagesAPI, reply, text, tool_use
from tests.test_mcp_client import TIME_SERVER, cli

pytestmark = pytest.mark.usefixtures("server_bytecode")  # servers start warm (conftest)

NOISY = {"command": sys.executable, "args": ["-c", "import runpy, sys; print('hello from a chatty server'); "
                                             "print('{not json either'); sys.stdout.flush(); "
                                             "sys.argv = ['mcp-server-time']; runpy.run_module('mcp_server_time', run_name='__main__')"]}
HANGING = {"command": sys.executable, "args": ["-c", "import time; time.sleep(300)"]}
BROKEN = {"command": "/nonexistent/mcp-server"}


@pytest.fixture(autouse=True)
def private_trust_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A config folder of the test's own, where the test's folder is a trusted workspace (MCP servers still need theirs)."""
    from tui_agent.core.trust import trust_folder

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    trust_folder(str(tmp_path))


def tuiagent(repo: Path, *args: str, stdin: str = "", timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tui_agent.cli", "--project", str(repo), *args], input=stdin,
                          capture_output=True, text=True, timeout=timeout, env=os.environ.copy())


def headless(repo: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """`tuiagent --project REPO ARGS` with `stdin`, its `main` in this process (what the run prints and does with its
    servers is the subject, not its process); `tuiagent` above is the process, for the tests that import it."""
    saved = sys.stdin
    sys.stdin = io.StringIO(stdin)
    try:
        return run_in_process("--project", str(repo), *args)
    finally:
        sys.stdin = saved


def lines_of(out: str) -> list[dict]:
    return [json.loads(line) for line in out.splitlines() if line.strip()]


@pytest.mark.timeout(180)
def test_failed_hanging_and_noisy_servers_neither_hold_the_run_nor_go_unreported(repo: Path, api: FakeMessagesAPI) -> None:
    servers = {"time": TIME_SERVER, "broken": BROKEN, "hang": HANGING, "noisy": NOISY}
    (repo / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    assert cli(repo, "mcp", "trust", "--all").returncode == 0
    api.enqueue(reply(text("hello")))
    started = time.monotonic()
    done = headless(repo, "-p", "hi", "--output-format", "stream-json")
    elapsed = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    assert elapsed < 25, f"the run took {elapsed:.1f} s: a hanging server held it back"  # it is given up on at 30 s
    init, *_rest, result = lines_of(done.stdout)
    status = {row["name"]: row["status"] for row in init["mcp_servers"]}
    assert status == {"time": "connected", "noisy": "connected", "broken": "failed", "hang": "pending"}
    assert "No such file" in next(row["error"] for row in init["mcp_servers"] if row["name"] == "broken")
    warnings = "\n".join(result["warnings"])
    assert "MCP server broken failed" in warnings and "MCP server hang is still starting" in warnings
    assert "MCP server noisy writes text that is not JSON-RPC" in warnings and "hello from a chatty server" in warnings
    assert "Traceback" not in done.stderr and done.stderr.count("not JSON-RPC") <= 1
    assert "mcp__noisy__get_current_time" in api.requests[0].tool_names  # the noise did not break the server


def test_mcp_config_adds_servers_for_the_run(repo: Path, api: FakeMessagesAPI) -> None:
    config = json.dumps({"mcpServers": {"clock": TIME_SERVER, "nothing": BROKEN}})
    api.enqueue(reply(tool_use("mcp__clock__get_current_time", {"timezone": "UTC"})), reply(text("noon")))
    done = headless(repo, "-p", "time?", "--output-format", "stream-json", "--mcp-config", config,
                    "--allowedTools", "mcp__clock__get_current_time")
    assert done.returncode == 0, done.stderr
    lines = lines_of(done.stdout)
    init, result = lines[0], lines[-1]
    assert {row["name"]: row["status"] for row in init["mcp_servers"]} == {"clock": "connected", "nothing": "failed"}
    assert result["tool_calls"][0]["name"] == "mcp__clock__get_current_time" and not result["tool_calls"][0]["is_error"]
    assert any("MCP server nothing failed" in warning for warning in result["warnings"])
    bad = headless(repo, "-p", "x", "--output-format", "json", "--mcp-config", "{not json")
    assert bad.returncode == 2 and "--mcp-config" in json.loads(bad.stdout)["error"]


def test_the_prompt_comes_from_stdin_and_compatibility_flags_are_named(repo: Path, api: FakeMessagesAPI) -> None:
    api.enqueue(reply(text("read it")))
    done = headless(repo, "-p", "--output-format", "json", "--verbose", "--include-partial-messages",
                    "--setting-sources=user,project", stdin="a prompt\nover two lines\n")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert api.requests[0].messages[0]["content"][0]["text"] == "a prompt\nover two lines\n"
    assert "--include-partial-messages only applies to --output-format stream-json; ignored" in result["warnings"]
    assert any(warning.startswith("--setting-sources") for warning in result["warnings"])


def test_a_model_of_unknown_price_has_an_unknown_cost(repo: Path, api: FakeMessagesAPI) -> None:
    api.enqueue(reply(text("hi")))
    done = headless(repo, "-p", "hi", "--output-format", "json", "--model", "gpt-4o-sonnet-alias")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["total_cost_usd"] is None and result["modelUsage"]["gpt-4o-sonnet-alias"]["costUSD"] is None
    assert result["usage"]["output_tokens"] > 0


def test_the_reference_git_server_through_mcp_config(repo: Path, api: FakeMessagesAPI) -> None:
    pytest.importorskip("mcp_server_git")
    config = json.dumps({"mcpServers": {"git": {"command": sys.executable,
                                                "args": ["-m", "mcp_server_git", "--repository", str(repo)]}}})
    (repo / "new.txt").write_text("untracked\n")
    api.enqueue(reply(tool_use("mcp__git__git_status", {"repo_path": str(repo)}),
                      tool_use("mcp__git__git_log", {"repo_path": str(repo), "max_count": 1})), reply(text("clean-ish")))
    done = headless(repo, "-p", "status?", "--output-format", "json", "--mcp-config", config,
                    "--allowedTools", "mcp__git__git_status,mcp__git__git_log")
    assert done.returncode == 0, done.stderr
    calls = {call["name"]: call for call in json.loads(done.stdout)["tool_calls"]}
    assert not calls["mcp__git__git_status"]["is_error"] and not calls["mcp__git__git_log"]["is_error"]
    answers = {block["tool_use_id"]: block["content"] for block in api.requests[1].messages[-1]["content"]
               if block.get("type") == "tool_result"}
    assert "new.txt" in answers[calls["mcp__git__git_status"]["id"]]


def test_the_init_line_lists_a_held_server_of_a_restricted_project(tmp_path: Path, api: FakeMessagesAPI,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.gitrepo import git, init_repo

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "nothing-trusted"))
    repo = init_repo(tmp_path / "elsewhere" / "project")
    marker = tmp_path / "server-ran"
    (repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"ping": {"command": "sh", "args": ["-c", f"touch {marker}"]}}}))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a server")
    api.enqueue(reply(text("hi")))
    done = headless(repo, "-p", "hi", "--output-format", "stream-json", "--verbose")
    assert done.returncode == 0, done.stderr
    init = lines_of(done.stdout)[0]
    assert [(row["name"], row["status"], row["tuiagent_status"]) for row in init["mcp_servers"]] == [
        ("ping", "disabled", "untrusted")]
    assert "not trusted" in init["mcp_servers"][0]["error"] and not marker.exists()


@pytest.mark.timeout(120)
def test_mcp_list_shows_a_servers_noise_with_its_control_characters_visible(repo: Path) -> None:
    chatty = {"command": sys.executable, "args": ["-c", "import runpy, sys; print('\\x1b]0;owned\\x07\\x1b[2Jhi'); "
                                                  "sys.stdout.flush(); sys.argv = ['mcp-server-time']; "
                                                  "runpy.run_module('mcp_server_time', run_name='__main__')"]}
    (repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"noisy": chatty}}))
    assert cli(repo, "mcp", "trust", "--all").returncode == 0
    out = headless(repo, "mcp", "list").stdout
    assert "not JSON-RPC" in out and "\x1b" not in out and "\x07" not in out and "\\x1b[2Jhi" in out
