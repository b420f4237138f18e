"""A newcomer's first ten minutes in a real terminal (tmux), at 80×24 and at 200×50: first launch, a prompt, a tool
authored, every catalog key, zoom in and out then a key, the palette, @ completion, a resize while a turn runs,
/clear then /resume then a prompt. Every step waits for the screen (no fixed sleeps), so it holds under CPU load."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.test_e2e_tmux import TOOL_V1, TOOL_V2, subjects, wait_git
from tests.e2e.tmux_session import FakeServerProcess, TmuxSession
from tests.gitrepo import init_repo, user_state

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

SLOW_ANSWER = "README.md says hello to the world. " * 6
SCRIPT = [
    {"content": [{"type": "text", "text": "I will write a **count_words** tool."},
                 {"type": "tool_use", "name": "create_tool", "input": {"name": "count_words", "source": TOOL_V1}}]},
    {"content": [{"type": "tool_use", "name": "count_words", "input": {"path": "README.md"}}]},
    {"text": "README.md has 3 words. The tool is in the catalog."},
    {"content": [{"type": "tool_use", "name": "create_tool", "input": {"name": "count_words", "source": TOOL_V2}}]},
    {"text": "Updated count_words to read UTF-8."},
    {"text": SLOW_ANSWER + "Done reading.", "delay_s": 0.25},
    {"repeat": {"text": "Nothing more to do."}},
]


@pytest.fixture(params=[(80, 24), (200, 50)], ids=["80x24", "200x50"])
def newcomer(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[TmuxSession, Path, tuple[int, int]]]:
    repo = init_repo(tmp_path / "project")
    server = FakeServerProcess(SCRIPT, tmp_path)
    env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": server.base_url, "TERM": "xterm-256color", "COLORTERM": "truecolor"}
    width, height = request.param
    terminal = TmuxSession([sys.executable, "-m", "tui_agent.cli", "--project", str(repo)], env=env, cwd=repo, width=width, height=height)
    try:
        yield terminal, repo, request.param
    finally:
        terminal.close()
        server.stop()


def send_prompt(terminal: TmuxSession, text: str) -> None:
    terminal.send("F2")
    terminal.type(text)
    terminal.send("Enter")  # on a "/command" completion, enter runs it


def close(terminal: TmuxSession, text: str, *, back: str | None = None) -> None:
    """Esc, then wait until `text` is gone with the modal it was in (its frame's top-left corner, or the palette's search
    icon, left of where toasts stack) and, when given, `back` is shown: a key sent right after a lone Esc would read as
    Alt+key, and a toast passing over `text` hides it for a moment without anything having closed. Esc again (as a
    person would) when the screen still shows it open after a while."""
    for _attempt in range(3):
        terminal.send("Escape")
        try:
            terminal.wait_for(lambda s: text not in s and "█▀▀▀" not in s and "🔎" not in s and (back is None or back in s),
                              timeout=10, what=f"{text!r} gone")
            return
        except AssertionError:
            continue
    raise AssertionError(f"{text!r} is still on screen after three Esc presses (the pane's processes: "
                         f"{terminal.processes()}):\n{terminal.screen()}")


def catalog_keys(terminal: TmuxSession, repo: Path) -> None:
    """v r h f s / U u d p, each answered on screen (or in git)."""
    terminal.send("F3")
    terminal.wait_for(lambda s: "v View" in s and "count_words" in s, what="the catalog with its keys")
    terminal.send("v")
    terminal.wait_text("esc to close")
    close(terminal, "esc to close")
    terminal.send("r")
    terminal.wait_text("Run count_words")
    terminal.type("README.md")
    terminal.send("Enter")
    terminal.wait_text("count_words: ok in")
    terminal.send("F3", "h")
    terminal.wait_text("History of count_words")
    close(terminal, "History of count_words")
    terminal.send("f")
    terminal.wait_for(lambda s: "no drift since" in s or "drifted since" in s, what="the drift report")
    terminal.send("F3", "s")
    terminal.wait_text("sort: status")
    terminal.send("/")
    # Textual forwards a key to the widget focused when it arrives: "zz" sent with "/" in one burst reaches the table
    terminal.wait_text("Clear filter")
    terminal.type("zz")
    terminal.wait_text("0 shown")
    close(terminal, "0 shown", back="filter: words")
    terminal.send("U")
    terminal.wait_text("Revert count_words to which version?")
    close(terminal, "Revert count_words to which version?")
    terminal.send("u")
    terminal.wait_text("Revert tool count_words to its previous version")  # it says what it will do, and asks
    terminal.send("y")
    wait_git(repo, "tuiagent: revert tool count_words", terminal)
    assert (repo / ".agent" / "tools" / "count_words.py").read_text() == TOOL_V1
    terminal.send("F3", "d")
    terminal.wait_text("Prune tool count_words?")
    terminal.send("y")
    wait_git(repo, "tuiagent: prune tool count_words", terminal)
    terminal.wait_for(lambda s: "0 tools" in s, what="the catalog without the tool")
    terminal.send("p")
    terminal.wait_for(lambda s: "1 pruned tools" in s and "count_words" in s, what="the pruned view")
    terminal.send("Enter")
    wait_git(repo, "tuiagent: restore tool count_words", terminal)
    # the restore goes back to the catalog, on the tool it restored
    terminal.wait_for(lambda s: "1 tools" in s and "count_words" in s and "pruned tools" not in s, what="the tool back")


def test_a_newcomers_first_ten_minutes(newcomer: tuple[TmuxSession, Path, tuple[int, int]]) -> None:
    terminal, repo, (width, height) = newcomer
    before = user_state(repo)
    terminal.wait_for(lambda s: "⎇ main" in s and ("bubblewrap" in s or "bwrap" in s) and "$0.0000" in s, timeout=30, what="the first screen")

    send_prompt(terminal, "count the words in README.md")
    screen = terminal.wait_text("The tool is in the catalog.", timeout=40)
    assert "create_tool count_words · 14 lines · tests 1/1 passed" in screen
    assert subjects(repo)[0] == "tuiagent: add tool count_words"
    send_prompt(terminal, "make it read UTF-8")
    terminal.wait_text("Updated count_words to read UTF-8.", timeout=40)
    wait_git(repo, "tuiagent: update tool count_words", terminal)

    catalog_keys(terminal, repo)

    terminal.send("F5")  # zoom the catalog, back, then a catalog key must still work at once
    terminal.wait_for(lambda s: "Conversation" not in s, what="the zoomed catalog")
    terminal.send("F5", "F3", "v")
    terminal.wait_text("esc to close")
    close(terminal, "esc to close")

    terminal.send("C-p")
    terminal.wait_text("Search for commands")  # the palette is open: typing goes into it
    terminal.type("zoom")
    terminal.wait_text("Zoom the pane")
    close(terminal, "Zoom the pane")

    terminal.send("F2")
    terminal.wait_text("Updated count_words to read UTF-8.")  # the conversation (and its prompt) is in front again
    terminal.type("what does @READ")
    terminal.wait_text("@README.md")
    terminal.send("Tab")
    terminal.wait_text("what does @README.md")
    terminal.type("say?")
    terminal.send("Enter")
    terminal.wait_text("Attached: README.md", timeout=30)
    terminal.wait_text("README.md says hello", timeout=30)  # streaming: resize while the turn runs
    other = (120, 40) if width == 80 else (80, 24)
    terminal.tmux("resize-window", "-t", "e2e", "-x", str(other[0]), "-y", str(other[1]))
    screen = terminal.wait_text("Done reading.", timeout=60)
    assert max(len(line) for line in screen.splitlines()) <= other[0]
    terminal.tmux("resize-window", "-t", "e2e", "-x", str(width), "-y", str(height))
    terminal.wait_for(lambda s: "$" in s.splitlines()[0] and "●" not in s.splitlines()[0] and len(s.splitlines()) == height,
                      what="the original size, the turn over")

    send_prompt(terminal, "/clear")
    terminal.wait_text("a new session started")
    send_prompt(terminal, "/resume")
    terminal.wait_text("Resume a session")
    terminal.send("Enter")
    # the notice is the last line of the view: it stayed out of sight (under a stale paint of the first turns) when a
    # layout's scroll clamp mid-resume slid the window and released the anchor; the resume itself takes well under 1 s
    screen = terminal.wait_text("Resumed session")
    assert screen.count("Updated count_words to read UTF-8.") <= 1, screen  # each resumed entry shown once
    send_prompt(terminal, "anything else?")  # the view follows the resumed conversation
    terminal.wait_for(lambda s: "anything else?" in s and "Nothing more to do." in s, what="the next turn in sight")

    terminal.send("C-q")
    terminal.wait_text("EXITED-0", timeout=20)
    assert user_state(repo) == before
