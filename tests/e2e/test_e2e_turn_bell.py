"""In a real terminal (tmux): a turn that ran longer than `[ui] notify_after_s` rings the bell when it ends; a short one
does not."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from tests.e2e.tmux_session import FakeServerProcess, TmuxSession
from tests.gitrepo import init_repo

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

SCRIPT = [{"content": [{"type": "text", "text": "quick answer"}]},
          {"content": [{"type": "text", "text": "slow answer"}], "delay_s": 2.5}]


def bell(terminal: TmuxSession) -> bool:
    """tmux flags a window that rang the bell (the session is detached, so even its current window)."""
    return terminal.tmux("display", "-p", "-t", "e2e", "#{window_bell_flag}").strip() == "1"


def test_a_long_turn_rings_the_bell_when_it_ends_and_a_short_one_does_not(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "project")
    (repo / ".agent").mkdir(exist_ok=True)
    (repo / ".agent" / "config.toml").write_text("[ui]\nnotify_after_s = 2\n")
    server = FakeServerProcess(SCRIPT, tmp_path)
    env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": server.base_url, "TERM": "xterm-256color"}
    terminal = TmuxSession([sys.executable, "-m", "tui_agent.cli", "--project", str(repo), "--sandbox-tier", "rlimits"],
                           env=env, cwd=repo, width=100, height=30)
    try:
        terminal.wait_for(lambda s: "rlimits" in s and "palette" in s, timeout=40, what="the app, open")
        terminal.type("first")
        terminal.send("Enter")
        terminal.wait_text("quick answer", timeout=30)
        terminal.wait_for(lambda s: "● esc" not in s, timeout=10, what="the turn's end")
        assert not bell(terminal), "a turn shorter than notify_after_s rang the bell"
        terminal.type("second")
        terminal.send("Enter")
        terminal.wait_text("slow answer", timeout=30)
        terminal.wait_for(lambda s: bell(terminal), timeout=10, what="the bell")
    finally:
        terminal.close()
        server.stop()
