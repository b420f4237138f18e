"""Reading replies in a real terminal (tmux) at 80×24 and 200×50: a prompt sent while scrolled up brings its reply
into view (with the prompt box or the conversation focused, after a text reply or a tool call), a mouse selection
copies the text selected, and a code block keeps its indentation and scrolls sideways.

Each size is one tuiagent session taking these steps in turn (each on its own reply), so the app starts once a size."""

from __future__ import annotations

import re
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
    """Send `prompt` and wait for the turn's end with `answer_mark` on screen; the screen once the turn ended.

    Enter goes once the prompt box shows the whole prompt: typed while the conversation has the focus (after a mouse
    selection in it), the characters move the focus to the box, and an Enter read before that reaches the conversation."""
    terminal.type(prompt)
    terminal.wait_for(lambda s: re.search(rf"▊ {re.escape(prompt)} *▎", s) is not None, timeout=15, what=f"{prompt!r} in the prompt box")
    terminal.send("Enter")
    terminal.wait_text(answer_mark, timeout=30)
    return terminal.wait_for(lambda s: "● esc" not in s and answer_mark in s, timeout=15, what="the turn's end")


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


def copy(terminal: TmuxSession, notice: str = "Copied") -> str:
    """Ctrl+C, then the terminal's clipboard (tmux's buffer, set by OSC 52) once `notice` shows and the buffer changed
    (an earlier copy's notice may still be on screen)."""
    before = buffer(terminal)
    terminal.send("C-c")
    terminal.wait_for(lambda s: notice in s and buffer(terminal) != before, timeout=30, what=f"the copy ({notice!r})")
    return buffer(terminal)


def buffer(terminal: TmuxSession) -> str:
    try:
        return terminal.tmux("show-buffer")
    except RuntimeError:  # nothing copied yet
        return ""


LONG_REPLY = "\n\n".join(f"Paragraph {n} of a long answer, with words enough to fill a line." for n in range(12))
EARLIER_TURNS = 12
"""Turns before the first one sent while scrolled up: more entries than the conversation keeps mounted at once."""
SCROLLED_CASES = (("prompt", "text", "SECONDREPLY"), ("conversation", "tool", "THIRDREPLY"))
"""(what has focus, what comes before the reply, the reply's mark): one prompt sent while scrolled up for each."""


def scrolled_script(shape: str, mark: str) -> list[dict[str, Any]]:
    script: list[dict[str, Any]] = []
    if shape == "tool":  # the reply comes after a call the model makes first
        script.append({"content": [{"type": "text", "text": "Reading it first."},
                                   {"type": "tool_use", "name": "read_file", "input": {"path": "README.md"}}]})
    reply = f"{mark} begins here. " + " ".join(f"word{n}" for n in range(40)) + f" {mark}-END"
    script.append({"content": [{"type": "text", "text": reply}], "delay_s": 0.05})
    return script


def a_prompt_sent_after_page_up_scrolls_to_it_and_its_reply_stays_in_view(terminal: TmuxSession, focus: str, mark: str,
                                                                         last_seen: str) -> None:
    if focus == "conversation":  # typing there goes to the prompt box
        terminal.send("F2")
    for _ in range(8):
        terminal.send("PageUp")
    terminal.wait_for(lambda s: last_seen not in s, timeout=10, what="scrolled up")
    terminal.type("the new question")
    terminal.send("PageUp", "Enter")  # read in one go (as a loaded machine reads them): Enter before PageUp's scroll ran
    terminal.wait_for(lambda s: f"{mark} begins" in s, timeout=30, what="the reply, streaming")
    screen = terminal.wait_for(lambda s: "● esc" not in s and f"{mark}-END" in s, timeout=30, what="the reply's end in view")
    assert "▼ new below" not in screen


SELECTABLE = "Start with **SELECTME alpha beta gamma** and then\n\n- the second point, DELTA epsilon\n- a third"


def a_mouse_selection_over_part_of_a_reply_copies_that_part(terminal: TmuxSession) -> None:
    ask(terminal, "hi", "DELTA epsilon")
    screen = settled(terminal)
    x1, y1 = find(screen, "alpha beta")
    x2, y2 = find(screen, "DELTA")
    mouse(terminal, (0, x1, y1, "M"), (32, x1 + 3, y1, "M"), (32, x2 + 4, y2, "M"), (0, x2 + 4, y2, "m"))
    copied = copy(terminal)
    assert copied.startswith("alpha beta gamma") and copied.rstrip().endswith("DELTA"), copied
    assert "SELECTME" not in copied and "**" not in copied and "epsilon" not in copied
    assert "the second point" in copied
    x, y = find(terminal.screen(), "gamma")  # a selection within one line
    mouse(terminal, (0, x, y, "M"), (32, x + 4, y, "M"), (0, x + 5, y, "m"))
    assert copy(terminal, "Copied 5 characters") == "gamma"


LONG_LINE = "        return combine(" + ", ".join(f"argument_{n:02d}" for n in range(24)) + ")  # TAILMARK"
CODE = f"def compute(values):\n    for value in values:\n{LONG_LINE}\n    return None"
FENCED_REPLY = f"Here is the function:\n\n```python\n{CODE}\n```\n\nThat is all."
NOTCH_COLUMNS = 4
"""Columns a wheel notch scrolls a code block sideways (Textual's `App.scroll_sensitivity_x`)."""


def a_code_block_keeps_its_indentation_and_scrolls_sideways(terminal: TmuxSession, width: int) -> None:
    ask(terminal, "show me", "That is all.")
    screen = settled(terminal)
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
    copied = copy(terminal)
    assert copied.startswith("the function:\ndef compute(values):\n    for value"), copied  # prose, then code as written
    for _ in range(6):
        mouse(terminal, (69, column + 4, row + 2, "M"))  # shift + wheel down over the block: sideways
    terminal.wait_for(lambda s: "def compute(values):" not in s and "That is all." in s, timeout=30, what="shift+wheel")
    for _ in range(len(LONG_LINE) // NOTCH_COLUMNS // 6 + 1):  # notches enough to reach the tail at any width
        mouse(terminal, *[(67, column + 4, row + 2, "M")] * 6)  # a sideways wheel (or touchpad) to the right
    terminal.wait_for(lambda s: "TAILMARK" in s, timeout=30, what="the block's tail after the sideways wheel")


@pytest.mark.parametrize("size", SIZES, ids=lambda size: f"{size[0]}x{size[1]}")
def test_reading_replies_scrolled_up_selected_and_in_code_blocks(tmp_path: Path, size: tuple[int, int]) -> None:
    script: list[dict[str, Any]] = [{"text": LONG_REPLY + f" ANSWER{n}."} for n in range(EARLIER_TURNS)]
    for _focus, shape, mark in SCROLLED_CASES:
        script += scrolled_script(shape, mark)
    script += [{"text": SELECTABLE}, {"text": FENCED_REPLY}]
    with terminal_with(tmp_path, script, *size) as terminal:
        for n in range(EARLIER_TURNS):
            ask(terminal, f"question {n}", f"ANSWER{n}.")
        last_seen = f"ANSWER{EARLIER_TURNS - 1}"
        for focus, _shape, mark in SCROLLED_CASES:
            a_prompt_sent_after_page_up_scrolls_to_it_and_its_reply_stays_in_view(terminal, focus, mark, last_seen)
            last_seen = f"{mark}-END"
        a_mouse_selection_over_part_of_a_reply_copies_that_part(terminal)
        a_code_block_keeps_its_indentation_and_scrolls_sideways(terminal, size[0])
