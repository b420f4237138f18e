"""Bubblewrap refusing to start the sandbox (a `bwrap` on PATH that passes the probe, then fails as a real one does
without user namespaces): a clear error with bwrap's words and how to fix it, in the API, the CLI, headless -p and
the TUI; never a ConnectionResetError or a traceback, and nothing counted against a tool."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.agent_helpers import GOOD_TOOL
from tests.fake_messages_api import FakeMessagesAPI, reply, text, tool_use
from tests.gitrepo import git
from tests.ui_support import SIZE, make_app, ready, turn_answered, wait_until
from tui_agent.cli import main
from tui_agent.core.catalog.api import Catalog
from tui_agent.core.project import Project
from tui_agent.core.sandbox import Sandbox, SandboxUnavailable
from tui_agent.core.sandbox import Snippet, ToolCall

BWRAP_SAYS = "bwrap: setting up uid map: Permission denied"
REAL_BWRAP = shutil.which("bwrap")


def clear(message: str) -> None:
    """The error names what failed, carries bwrap's own words and says how to fix it."""
    assert "the bubblewrap sandbox could not start (exit status 1)" in message, message
    assert BWRAP_SAYS in message and "How to fix" in message and "--sandbox-tier rlimits" in message, message
    assert "user namespaces" in message and "Traceback" not in message and "Connection reset" not in message, message


@pytest.fixture
def broken_bwrap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """PATH with a `bwrap` that answers the availability probe (which runs `true`) and refuses everything else."""
    assert REAL_BWRAP is not None
    shims = tmp_path / "shims"
    shims.mkdir()
    shim = shims / "bwrap"
    shim.write_text(f'#!/bin/sh\nfor last; do :; done\nif [ "$last" = true ]; then exec {REAL_BWRAP} "$@"; fi\n'
                    f'echo "{BWRAP_SAYS}" >&2\nexit 1\n')
    shim.chmod(0o755)
    path = f"{shims}:{os.environ['PATH']}"
    monkeypatch.setenv("PATH", path)
    return {**os.environ, "PATH": path}


def add_tool(repo: Path) -> None:
    project = Project.at(repo)
    project.ensure_layout()
    project.tool_path("count_lines").write_text(GOOD_TOOL)
    git(repo, "add", ".agent")
    git(repo, "commit", "-q", "-m", "catalog")


def cli(repo: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tui_agent.cli", "--project", str(repo), *args],
                          capture_output=True, text=True, timeout=120, env=env)


@pytest.mark.parametrize("warm_workers", [0, 2])  # 2: a warm worker fails to boot, then a fresh one
async def test_the_sandbox_raises_a_clear_error_and_nothing_is_counted_against_a_tool(
        repo: Path, broken_bwrap: dict[str, str], warm_workers: int) -> None:
    project = Project.at(repo)
    box = await Sandbox.start(project, tier="bubblewrap", warm_workers=warm_workers)
    try:
        with pytest.raises(SandboxUnavailable) as raised:
            await box.run(Snippet("1 + 1"))
        clear(str(raised.value))
        with pytest.raises(SandboxUnavailable):
            await box.run(ToolCall("os", "getcwd", {}))
    finally:
        await box.aclose()


async def test_a_tool_call_through_the_catalog_is_not_recorded_as_the_tools_failure(
        repo: Path, broken_bwrap: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    add_tool(repo)
    project = Project.at(repo)
    monkeypatch.setenv("PATH", os.environ["PATH"].split(":", 1)[1])  # validated with the real bwrap first
    box = await Sandbox.start(project, warm_workers=0)
    await (await Catalog.open(project, box)).aclose()
    await box.aclose()
    monkeypatch.setenv("PATH", broken_bwrap["PATH"])
    box = await Sandbox.start(project)
    catalog = await Catalog.open(project, box)
    try:
        with pytest.raises(SandboxUnavailable) as raised:
            await catalog.call_tool("count_lines", {"path": "README.md"})
        clear(str(raised.value))
    finally:
        await catalog.aclose()
        await box.aclose()
    listed = cli(repo, broken_bwrap, "tools", "list", "--json")
    entry = next(tool for tool in json.loads(listed.stdout) if tool["name"] == "count_lines")
    assert entry["calls"] == 0 and entry["failures"] == 0, entry


def test_sandbox_run_says_what_failed_as_text_and_json(repo: Path, broken_bwrap: dict[str, str], tmp_path: Path) -> None:
    script = tmp_path / "hello.py"
    script.write_text("print('hi')\n")
    done = cli(repo, broken_bwrap, "sandbox", "run", str(script))
    assert done.returncode != 0 and done.stdout == ""
    clear(done.stderr)
    assert done.stderr.startswith("tuiagent: sandbox: ")
    as_json = cli(repo, broken_bwrap, "sandbox", "run", "--json", str(script))
    assert as_json.returncode == done.returncode
    answer = json.loads(as_json.stdout)
    assert answer["stage"] == "sandbox"
    clear(answer["error"])


def test_tools_run_says_what_failed_as_text_and_json(repo: Path, broken_bwrap: dict[str, str]) -> None:
    add_tool(repo)
    done = cli(repo, broken_bwrap, "tools", "run", "count_lines", "--arg", "path=README.md")
    assert done.returncode == 1 and done.stdout == ""
    clear(done.stderr)
    as_json = cli(repo, broken_bwrap, "tools", "run", "count_lines", "--args", '{"path": "README.md"}', "--json")
    assert as_json.returncode == 1
    answer = json.loads(as_json.stdout)
    assert answer["stage"] == "sandbox"
    clear(answer["error"])


def test_headless_tells_the_person_and_the_model(repo: Path, broken_bwrap: dict[str, str], api: FakeMessagesAPI,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    api.enqueue(reply(tool_use("run_shell", {"command": "echo hi > made.txt"})), reply(text("the sandbox is broken")))
    assert main(["--project", str(repo), "-p", "make a file", "--yes"]) == 0
    captured = capsys.readouterr()
    clear(captured.err)
    assert "[error] run_shell could not run: sandbox: the bubblewrap sandbox could not start" in captured.err
    assert "[tool] run_shell failed: sandbox: the bubblewrap sandbox could not start" in captured.err
    result = api.requests[1].tool_results()[0]
    assert result["is_error"]
    clear(result["content"])
    assert not (repo / "made.txt").exists()


@pytest.mark.parametrize("output_format", ["json", "stream-json"])
def test_headless_json_keeps_stdout_json_and_says_it_on_stderr(repo: Path, broken_bwrap: dict[str, str], api: FakeMessagesAPI,
                                                              capsys: pytest.CaptureFixture[str], output_format: str) -> None:
    api.enqueue(reply(tool_use("run_shell", {"command": "echo hi"})), reply(text("the sandbox is broken")))
    assert main(["--project", str(repo), "-p", "say hi", "--yes", "--output-format", output_format]) == 0
    captured = capsys.readouterr()
    clear(captured.err)
    lines = [json.loads(line) for line in captured.out.splitlines()]
    result = lines[-1]
    assert result["type"] == "result" and result["result"] == "the sandbox is broken"
    if output_format == "json":
        assert len(lines) == 1 and result["tool_calls"][0]["is_error"] is True
    else:
        tool_result = next(line for line in lines if line["type"] == "user")["message"]["content"][0]
        assert tool_result["is_error"]
        clear(tool_result["content"])


async def test_the_tui_shows_the_error_as_a_notice(repo: Path, broken_bwrap: dict[str, str], api: FakeMessagesAPI) -> None:
    api.enqueue(reply(tool_use("run_python", {"code": "1 + 1"})), reply(text("the sandbox is broken")))
    app = make_app(repo)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        app.prompt_area.focus()
        app.prompt_area.insert("add one and one")
        await pilot.press("enter")
        await wait_until(pilot, lambda: turn_answered(app, "the sandbox is broken"), timeout=30, message="the turn to finish")
        notices = [entry for entry in app.conversation.entries if entry.kind == "notice" and entry.level == "error"]
        assert notices and notices[0].text.startswith("run_python could not run: sandbox: "), notices
        clear(notices[0].text)
        tool = next(entry for entry in app.conversation.entries if entry.kind == "tool")
        assert tool.is_error
        clear(tool.result or "")
