"""Reading replies in a real terminal (tmux) at 80×24 and 200×50: a code block keeps its indentation and scrolls
sideways, a mouse selection copies the text selected, and a prompt sent while scrolled up brings its reply into view."""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.tmux_session import FakeServerProcess, TmuxSession
from tests.gitrepo import init_repo

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

SIZES = [(80, 24), (200, 50)]


@contextmanager
def terminal_with(tmp_path: Path, script: list[dict[str, Any]], width: int, height: int) -> Iterator[TmuxSession]:
    """tuiagent in a `width`×`height` tmux window against the fake server answering `script`, open and idle."""
    repo = init_repo(tmp_path / "project")
    server = FakeServerProcess(script, tmp_path)
    env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": server.base_url, "TERM": "xterm-256color",
           "XDG_CONFIG_HOME": str(tmp_path / "config")}
    terminal = TmuxSession([sys.executable, "-m", "tui_agent.cli", "--project", str(repo), "--sandbox-tier", "rlimits", "--trust-project"],
                           env=env, cwd=repo, width=width, height=height)
    try:
        terminal.tmux("set", "-g", "set-clipboard", "on")
        terminal.wait_for(lambda s: "rlimits" in s and "palette" in s, timeout=40, what="the app, open")
        yield terminal
    finally:
        terminal.close()
        server.stop()


def ask(terminal: TmuxSession, prompt: str, answer_mark: str) -> str:
    terminal.type(prompt)
    terminal.send("Enter")
    terminal.wait_text(answer_mark, timeout=30)
    terminal.wait_for(lambda s: "● esc" not in s and answer_mark in s, timeout=15, what="the turn's end")
    return settled(terminal)


def settled(terminal: TmuxSession, quiet_s: float = 0.3) -> str:
    """The screen once it stops changing for `quiet_s`: positions read from it (where to click) are the ones the app
    shows next, not those of a frame a loaded machine draws just before the turn's last layout."""
    screen = terminal.screen()
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        time.sleep(quiet_s)
        now = terminal.screen()
        if now == screen:
            return now
        screen = now
    raise AssertionError(f"the screen never settled:\n{screen}")


def mouse(terminal: TmuxSession, *events: tuple[int, int, int, str]) -> None:
    """SGR mouse reports: (button, column, row, 'M' press/motion or 'm' release), columns and rows from 0."""
    terminal.type("".join(f"\x1b[<{button};{x + 1};{y + 1}{kind}" for button, x, y, kind in events))


def find(screen: str, text: str) -> tuple[int, int]:
    """(column, row) where `text` starts on the screen."""
    for row, line in enumerate(screen.splitlines()):
        if text in line:
            return line.index(text), row
    raise AssertionError(f"{text!r} is not on the screen:\n{screen}")


LONG_LINE = "        return combine(" + ", ".join(f"argument_{n:02d}" for n in range(24)) + ")  # TAILMARK"
CODE = f"def compute(values):\n    for value in values:\n{LONG_LINE}\n    return None"
FENCED_REPLY = f"Here is the function:\n\n```python\n{CODE}\n```\n\nThat is all."
NOTCH_COLUMNS = 4
"""Columns a wheel notch scrolls a code block sideways (Textual's `App.scroll_sensitivity_x`)."""


@pytest.mark.parametrize("size", SIZES, ids=lambda size: f"{size[0]}x{size[1]}")
def test_a_code_block_keeps_its_indentation_and_scrolls_sideways(tmp_path: Path, size: tuple[int, int]) -> None:
    width, height = size
    with terminal_with(tmp_path, [{"repeat": {"text": FENCED_REPLY}}], width, height) as terminal:
        screen = ask(terminal, "show me", "That is all.")
        assert len(LONG_LINE) > width
        column, row = find(screen, "def compute(values):")
        lines = screen.splitlines()
        assert lines[row + 1][column:].startswith("    for value in values:")
        assert lines[row + 2][column:].startswith("        return combine(argument_00, argument_01")  # its indent kept
        assert lines[row + 3][column:].startswith("    return None")  # the long line did not wrap onto the next rows
        assert "TAILMARK" not in screen
        mouse(terminal, (0, column + 4, row + 1, "M"), (0, column + 4, row + 1, "m"))  # a click focuses it: keys scroll
        terminal.send("End")
        screen = terminal.wait_for(lambda s: "TAILMARK" in s, timeout=30, what="the block's tail after End")
        assert "def compute(values):" not in screen and "That is all." in screen  # only the block moved
        terminal.send("Home")
        screen = terminal.wait_for(lambda s: "TAILMARK" not in s and "def compute(values):" in s, timeout=30, what="back at the start")
        x1, y1 = find(screen, "the function:")
        x2, y2 = find(screen, "(values):")
        mouse(terminal, (0, x1, y1, "M"), (32, x1 + 2, y1, "M"), (32, x2 + 2, y2 + 1, "M"), (0, x2 + 2, y2 + 1, "m"))
        terminal.send("C-c")
        terminal.wait_for(lambda s: "Copied" in s, timeout=30, what="the copy notice")
        copied = terminal.tmux("show-buffer")
        assert copied.startswith("the function:\ndef compute(values):\n    for value"), copied  # prose, then code as written
        for _ in range(6):
            mouse(terminal, (69, column + 4, row + 2, "M"))  # shift + wheel down over the block: sideways
        terminal.wait_for(lambda s: "def compute(values):" not in s and "That is all." in s, timeout=30, what="shift+wheel")
        for _ in range(len(LONG_LINE) // NOTCH_COLUMNS // 6 + 1):  # notches enough to reach the tail at any width
            mouse(terminal, *[(67, column + 4, row + 2, "M")] * 6)  # a sideways wheel (or touchpad) to the right
        terminal.wait_for(lambda s: "TAILMARK" in s, timeout=30, what="the block's tail after the sideways wheel")


SELECTABLE = "Start with **SELECTME alpha beta gamma** and then\n\n- the second point, DELTA epsilon\n- a third"


@pytest.mark.parametrize("size", SIZES, ids=lambda size: f"{size[0]}x{size[1]}")
def test_a_mouse_selection_over_part_of_a_reply_copies_that_part(tmp_path: Path, size: tuple[int, int]) -> None:
    with terminal_with(tmp_path, [{"repeat": {"text": SELECTABLE}}], *size) as terminal:
        screen = ask(terminal, "hi", "DELTA epsilon")
        x1, y1 = find(screen, "alpha beta")
        x2, y2 = find(screen, "DELTA")
        mouse(terminal, (0, x1, y1, "M"), (32, x1 + 3, y1, "M"), (32, x2 + 4, y2, "M"), (0, x2 + 4, y2, "m"))
        terminal.send("C-c")
        terminal.wait_for(lambda s: "Copied" in s, timeout=10, what="the copy notice")
        copied = terminal.tmux("show-buffer")
        assert copied.startswith("alpha beta gamma") and copied.rstrip().endswith("DELTA"), copied
        assert "SELECTME" not in copied and "**" not in copied and "epsilon" not in copied
        assert "the second point" in copied
        x, y = find(terminal.screen(), "gamma")  # a selection within one line
        mouse(terminal, (0, x, y, "M"), (32, x + 4, y, "M"), (0, x + 5, y, "m"))
        terminal.send("C-c")
        terminal.wait_for(lambda s: "Copied 5 characters" in s, timeout=10, what="the second copy")
        assert terminal.tmux("show-buffer") == "gamma"


LONG_REPLY = "\n\n".join(f"Paragraph {n} of a long answer, with words enough to fill a line." for n in range(12))
SECOND_REPLY = "SECONDREPLY begins here. " + " ".join(f"word{n}" for n in range(40)) + " SECONDREPLY-END"
EARLIER_TURNS = 12
"""Turns before the one sent while scrolled up: more entries than the conversation keeps mounted at once."""


@pytest.mark.parametrize(("focus", "shape"), [("prompt", "text"), ("conversation", "tool")])
@pytest.mark.parametrize("size", SIZES, ids=lambda size: f"{size[0]}x{size[1]}")
def test_a_prompt_sent_after_page_up_scrolls_to_it_and_its_reply_stays_in_view(tmp_path: Path, size: tuple[int, int], focus: str,
                                                                              shape: str) -> None:
    script: list[dict[str, Any]] = [{"text": LONG_REPLY + f" ANSWER{n}."} for n in range(EARLIER_TURNS)]
    if shape == "tool":  # the reply comes after a call the model makes first
        script.append({"content": [{"type": "text", "text": "Reading it first."},
                                   {"type": "tool_use", "name": "read_file", "input": {"path": "README.md"}}]})
    script.append({"content": [{"type": "text", "text": SECOND_REPLY}], "delay_s": 0.05})
    with terminal_with(tmp_path, script, *size) as terminal:
        for n in range(EARLIER_TURNS):
            ask(terminal, f"question {n}", f"ANSWER{n}.")
        if focus == "conversation":  # typing there goes to the prompt box
            terminal.send("F2")
        for _ in range(8):
            terminal.send("PageUp")
        terminal.wait_for(lambda s: f"ANSWER{EARLIER_TURNS - 1}" not in s, timeout=10, what="scrolled up")
        terminal.type("the new question")
        terminal.send("PageUp", "Enter")  # read in one go (as a loaded machine reads them): Enter before PageUp's scroll ran
        terminal.wait_for(lambda s: "SECONDREPLY begins" in s, timeout=30, what="the reply, streaming")
        screen = terminal.wait_for(lambda s: "● esc" not in s and "SECONDREPLY-END" in s, timeout=30, what="the reply's end in view")
        assert "▼ new below" not in screen
