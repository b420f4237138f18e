"""Every character typed in a real terminal reaches the model as pasting would bring it: zero-width joiners and
non-joiners (a Persian keyboard types ZWNJ), emoji sequences, combining marks, right-to-left text, no-break spaces."""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.tmux_session import FakeServerProcess, TmuxSession, echoing_tuiagent

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

TYPED = "می\u200cخواهم 👩\u200d💻 cafe\u0301 \u05e9\u05dc\u05d5\u05dd 10\u202f% a\u00a0b \u200eok"


@pytest.fixture
def session(tmp_path: Path) -> Iterator[tuple[TmuxSession, FakeServerProcess]]:
    with echoing_tuiagent(tmp_path, 100, 30) as running:
        yield running


def last_prompt(server: FakeServerProcess) -> str:
    messages = server.received()[-1]["messages"]
    content = messages[-1]["content"]
    text = content if isinstance(content, str) else "".join(block.get("text", "") for block in content)
    return str(text)


def test_joiners_and_format_characters_typed_in_a_terminal_reach_the_model(
        session: tuple[TmuxSession, FakeServerProcess]) -> None:
    terminal, server = session
    terminal.wait_for(lambda s: "Conversation" in s and ("bubblewrap" in s or "rlimits" in s), timeout=20,
                      what="the app, its sandbox tier in the header")
    terminal.type(TYPED)
    time.sleep(0.3)
    terminal.send("Enter")
    terminal.wait_text("Received.", timeout=20)
    assert TYPED in last_prompt(server)
