"""Untrusted text cannot drive the person's terminal: escape sequences in a model reply or a tool's output are drawn
as visible symbols (␛), never executed. Checked in a real terminal (tmux): the window title stays, no line is
erased or moved, and every output line is on screen exactly once."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.tmux_session import FakeServerProcess, TmuxSession
from tests.gitrepo import git, init_repo

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

TITLE = "\x1b]0;PWNED\x07"  # OSC 0: set the window title
UP_AND_ERASE = "\x1b[1A\x1b[2K"  # cursor up one line, erase it
CLEAR = "\x1b[2J\x1b[H"  # clear the screen, cursor home

TOOL = '''"""Print lines with escape sequences in them."""

SEQUENCES = ["\\x1b]0;PWNED\\x07", "\\x1b[1A\\x1b[2K", "\\x1b[2J\\x1b[H", "\\x9b1A"]


def noisy(count: int) -> int:
    """Print `count` numbered lines, each with an escape sequence after its number.

    Args:
        count: how many lines
    """
    for index in range(count):
        print(f"noisy line {index:02d} " + SEQUENCES[index % len(SEQUENCES)] + f"end {index:02d}")
    return count


def test_noisy() -> None:
    assert noisy(1) == 1
'''

SCRIPT = [{"text": f"A reply {TITLE}with a title, {UP_AND_ERASE}an erase and {CLEAR}a clear in it."},
          {"repeat": {"text": "Nothing more."}}]


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[TmuxSession]:
    repo = init_repo(tmp_path / "project")
    (repo / ".agent" / "tools").mkdir(parents=True)
    (repo / ".agent" / "tools" / "noisy.py").write_text(TOOL, encoding="utf-8")
    git(repo, "add", ".agent")
    git(repo, "commit", "-q", "-m", "a noisy tool")
    server = FakeServerProcess(SCRIPT, tmp_path)
    env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": server.base_url, "TERM": "xterm-256color"}
    session = TmuxSession([sys.executable, "-m", "tui_agent.cli", "--project", str(repo)], env=env, cwd=repo, width=160, height=48)
    try:
        yield session
    finally:
        session.close()
        server.stop()


def title(terminal: TmuxSession) -> str:
    return terminal.tmux("display", "-p", "-t", "e2e", "#{pane_title}").strip()


def test_escape_sequences_from_the_model_and_a_tool_are_shown_not_run(terminal: TmuxSession) -> None:
    terminal.wait_for(lambda s: "noisy" in s and "⎇ main" in s, timeout=40, what="the app with the tool")
    title_before = title(terminal)
    assert "PWNED" not in title_before

    terminal.type("hello")
    terminal.send("Enter")
    screen = terminal.wait_text("a clear in it.", timeout=30)
    assert "␛]0;PWNED" in screen and "␛[1A␛[2K" in screen and "␛[2J" in screen
    assert "A reply" in screen and "Conversation" in screen  # not cleared, not erased

    terminal.send("F3")
    terminal.wait_text("v View")
    terminal.send("r")
    terminal.wait_text("Run noisy")
    terminal.type("8")
    terminal.send("Enter")
    terminal.wait_text("noisy: ok in", timeout=30)
    screen = terminal.wait_text("noisy line 07", timeout=10)
    for index in range(8):
        rows = [row for row in screen.splitlines() if f"noisy line {index:02d} " in row]
        assert len(rows) == 1, (index, rows, screen)  # on screen exactly once, not erased, not doubled
        assert f"end {index:02d}" in rows[0] and ("␛" in rows[0] or "\ufffd" in rows[0]), rows[0]
    assert "A reply" in screen  # the clear sequence cleared nothing
    assert title(terminal) == title_before
