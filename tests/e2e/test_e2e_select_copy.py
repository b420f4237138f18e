"""In a real terminal (tmux): text of the conversation selected with the mouse is copied by ctrl+c (OSC 52, which tmux
takes as a paste buffer with `set-clipboard on`), not taken as "stop / quit"."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from tests.e2e.tmux_session import FakeServerProcess, TmuxSession
from tests.gitrepo import init_repo

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

ANSWER = "SELECTME alpha beta gamma"


def test_a_mouse_selection_in_the_conversation_is_copied_by_ctrl_c(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "project")
    server = FakeServerProcess([{"content": [{"type": "text", "text": ANSWER}]}], tmp_path)
    env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": server.base_url, "TERM": "xterm-256color"}
    terminal = TmuxSession([sys.executable, "-m", "tui_agent.cli", "--project", str(repo), "--sandbox-tier", "rlimits"],
                           env=env, cwd=repo, width=100, height=30)
    try:
        terminal.tmux("set", "-g", "set-clipboard", "on")
        terminal.wait_for(lambda s: "rlimits" in s and "palette" in s, timeout=40, what="the app, open")
        terminal.type("hi")
        terminal.send("Enter")
        screen = terminal.wait_text(ANSWER, timeout=30)
        terminal.wait_for(lambda s: "● esc" not in s, timeout=10, what="the turn's end")
        screen = terminal.screen()
        row = next(number for number, line in enumerate(screen.splitlines()) if ANSWER in line)
        start = screen.splitlines()[row].index(ANSWER)
        x1, x2, y = start + 1, start + len(ANSWER), row + 1  # SGR mouse coordinates count from 1
        terminal.type(f"\x1b[<0;{x1};{y}M\x1b[<32;{x1 + 5};{y}M\x1b[<32;{x2};{y}M\x1b[<0;{x2};{y}m")
        terminal.wait_for(lambda s: ANSWER in s, timeout=5, what="the answer still shown")
        terminal.send("C-c")
        terminal.wait_for(lambda s: "Copied" in s, timeout=10, what="the copy notice")
        assert terminal.tmux("show-buffer").strip() == ANSWER
        assert "again to quit" not in terminal.screen()
    finally:
        terminal.close()
        server.stop()
