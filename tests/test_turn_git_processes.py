"""A reply that calls no tool costs one work-tree checkpoint (its end is its start), counted by the git processes a
real `tuiagent -p` spawns; a turn that calls a tool is still checkpointed at its end, and the person's edits during a
quiet turn stay theirs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.agent_helpers import agent_runtime, run_turn
from tests.fake_messages_api import FakeMessagesAPI, reply, text, tool_use
from tui_agent.core.events import TextDelta
from tui_agent.core.runtime_state import agent_of

ROOT = Path(__file__).resolve().parent.parent


def logging_git(folder: Path, log: Path) -> Path:
    """A folder holding a `git` that appends its arguments to `log`, then runs the real git."""
    real = subprocess.run(["sh", "-c", "command -v git"], capture_output=True, text=True, check=True).stdout.strip()
    folder.mkdir()
    wrapper = folder / "git"
    wrapper.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{log}"\nexec "{real}" "$@"\n')
    wrapper.chmod(0o755)
    return folder


def git_calls(repo: Path, api: FakeMessagesAPI, tmp_path: Path, name: str, *flags: str) -> list[str]:
    """The git commands one `tuiagent -p hi` run in `repo` spawned (every process, in order)."""
    log = tmp_path / f"{name}.log"
    wrapper = logging_git(tmp_path / f"{name}-bin", log)
    env = {**os.environ, "PATH": f"{wrapper}{os.pathsep}{os.environ['PATH']}", "ANTHROPIC_API_KEY": "test-key",
           "ANTHROPIC_BASE_URL": api.base_url, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-m", "tui_agent.cli", "--project", str(repo), "-p", "hi", *flags], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return log.read_text().splitlines()


def test_a_reply_without_tool_calls_snapshots_the_work_tree_once(repo: Path, api: FakeMessagesAPI,
                                                                 tmp_path: Path) -> None:
    api.enqueue(reply(text("warm")), reply(text("Hello.")),
                reply(tool_use("write_file", {"path": "agent.txt", "content": "agent\n"})), reply(text("done")))
    git_calls(repo, api, tmp_path, "warm")  # the first run creates .agent/ and the saved checkpoint index
    quiet = git_calls(repo, api, tmp_path, "quiet")
    assert [call for call in quiet if call.startswith("write-tree")] == ["write-tree"]
    assert len([call for call in quiet if call.startswith("add -A")]) == 1
    assert not [call for call in quiet if call.startswith("diff-tree")]
    writing = git_calls(repo, api, tmp_path, "writing", "--allowedTools", "Write")
    assert len([call for call in writing if call.startswith("write-tree")]) == 4  # turn and call, before and after
    assert (repo / "agent.txt").read_text() == "agent\n"


async def test_an_edit_during_a_reply_without_tool_calls_stays_the_persons(repo: Path, api: FakeMessagesAPI) -> None:
    async with agent_runtime(repo, api) as runtime:
        api.enqueue(reply(text("Just talking.")), reply(tool_use("write_file", {"path": "agent.txt", "content": "a\n"})),
                    reply(text("done")))
        agent = agent_of(runtime)
        assert agent is not None
        async for event in agent.run_turn("talk"):
            if isinstance(event, TextDelta):  # the reply streams; the person saves a file in their editor
                (repo / "app.py").write_text("print('mine')\n")
        undo = runtime.core.undo
        assert undo is not None and undo.last_turn_paths() == []
        await run_turn(runtime, "write")
        result = await undo.undo_last(runtime.core.session)
        assert result.ok, result.message
        assert not (repo / "agent.txt").exists() and (repo / "app.py").read_text() == "print('mine')\n"
        result = await undo.undo_last(runtime.core.session)
        assert result.ok, result.message
        assert (repo / "app.py").read_text() == "print('mine')\n"
