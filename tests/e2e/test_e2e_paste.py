"""A 6,000-character bracketed paste in a real 80×24 terminal: the prompt box shows one token and stays small, and the
model receives every character pasted (tabs, trailing spaces, joiners, combining marks, right-to-left text)."""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.tmux_session import FakeServerProcess, TmuxSession, echoing_tuiagent
from tests.e2e.test_e2e_typed_characters import last_prompt

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

LINE = "ab\tc  \u200d\u0301 \u05e9\u05dc\u05d5\u05dd می\u200cخواهم 👩\u200d💻 {:03d} " + "y" * 16 + "  "
PASTED = "\n".join(LINE.format(i) for i in range(120)) + "\t"


@pytest.fixture
def session(tmp_path: Path) -> Iterator[tuple[TmuxSession, FakeServerProcess]]:
    with echoing_tuiagent(tmp_path, 80, 24) as running:
        yield running


def test_a_long_bracketed_paste_is_one_token_and_reaches_the_model_whole(
        session: tuple[TmuxSession, FakeServerProcess], tmp_path: Path) -> None:
    terminal, server = session
    assert len(PASTED) == 6000
    terminal.wait_for(lambda s: "Conversation" in s and ("bubblewrap" in s or "rlimits" in s), timeout=20,
                      what="the app, its sandbox tier in the header")
    terminal.type("see ")
    buffer = tmp_path / "paste.txt"
    buffer.write_text(PASTED, encoding="utf-8")
    terminal.tmux("load-buffer", "-b", "long", str(buffer))
    terminal.tmux("paste-buffer", "-p", "-b", "long", "-t", "e2e")  # bracketed, as a terminal pastes
    time.sleep(0.3)
    terminal.type(" ok")
    screen = terminal.wait_text("see [Pasted text #1 · 6,000 chars, 120 lines] ok", timeout=10)
    assert "yyyyyyyy" not in screen, screen  # none of the pasted lines fill the box
    box_rows = [row for row in screen.splitlines() if "[Pasted text #1" in row]
    assert len(box_rows) == 1, box_rows
    terminal.wait_for(lambda s: "^o Expand paste" in s.splitlines()[-1], timeout=5, what="the footer's expand key")
    terminal.send("Enter")
    terminal.wait_text("Received.", timeout=20)
    assert last_prompt(server) == f"see {PASTED} ok"
