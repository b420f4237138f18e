"""A folder outside git used "without git" (the TUI's `c`, headless `-p`): nothing is ever created in it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fake_messages_api import FakeMessagesAPI, reply, text, tool_use
from tui_agent.core.project import Project, outside_state_home


@pytest.fixture
def plain(tmp_path: Path) -> Path:
    folder = tmp_path / "plain"
    folder.mkdir()
    (folder / "notes.txt").write_text("remember the milk\n")
    return folder


def headless(folder: Path, api: FakeMessagesAPI, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": api.base_url}
    return subprocess.run([sys.executable, "-m", "tui_agent.cli", "--project", str(folder), "-p", *args],
                          capture_output=True, text=True, env=env, cwd=folder, timeout=120)


def test_a_headless_session_outside_git_creates_nothing_in_the_folder(plain: Path, api: FakeMessagesAPI) -> None:
    before = sorted(os.listdir(plain))
    api.enqueue(reply(text("Reading."), tool_use("read_file", {"path": "notes.txt"}),
                      tool_use("run_shell", {"command": "cat notes.txt"})),
                reply(text("It says: remember the milk.")), reply(text("Still the milk.")))
    done = headless(plain, api, "what does it say?", "--allow", "run_shell", "--output-format", "json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["result"] == "It says: remember the milk."
    read, shell = api.requests[1].tool_results()
    assert "remember the milk" in read["content"] and "remember the milk" in shell["content"]
    assert "used without git" in done.stderr  # says why there are no tools or recipes
    assert sorted(os.listdir(plain)) == before
    kept = Project.kept_outside(plain)
    assert kept.agent_dir.parent == outside_state_home() and any(kept.sessions_dir.iterdir())
    again = headless(plain, api, "and now?", "--continue")  # the session kept outside is found again
    assert again.returncode == 0, again.stderr
    assert [block["text"] for block in api.requests[2].messages[0]["content"]] == ["what does it say?"]
    assert sorted(os.listdir(plain)) == before


def test_headless_init_git_still_creates_the_repository(plain: Path, api: FakeMessagesAPI) -> None:
    api.enqueue(reply(text("ok")))
    done = headless(plain, api, "hi", "--init-git")
    assert done.returncode == 0, done.stderr
    assert (plain / ".git").is_dir() and (plain / ".agent" / "tools").is_dir()
