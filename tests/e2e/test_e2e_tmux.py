"""A scripted session in a real terminal: ask, watch a tool get authored, see it in the catalog, revert it, prune it, restore it."""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.tmux_session import FakeServerProcess, TmuxSession
from tests.gitrepo import git, init_repo, user_state

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

TOOL_V1 = '''"""Count words."""


def count_words(path: str) -> int:
    """Count the words of a project file.

    Args:
        path: the file, relative to the project
    """
    return len(open(path).read().split())


def test_count_words() -> None:
    assert count_words("README.md") >= 1
'''

TOOL_V2 = TOOL_V1.replace("return len(open(path).read().split())", "return len(open(path, encoding='utf-8').read().split())")

SCRIPT = [
    {"content": [{"type": "text", "text": "I will write a **count_words** tool for this."},
                 {"type": "tool_use", "name": "create_tool", "input": {"name": "count_words", "source": TOOL_V1}}], "delay_s": 0.005},
    {"content": [{"type": "tool_use", "name": "count_words", "input": {"path": "README.md"}}]},
    {"text": "README.md has 3 words. The tool is in the catalog."},
    {"content": [{"type": "tool_use", "name": "create_tool", "input": {"name": "count_words", "source": TOOL_V2}}]},
    {"text": "Updated count_words to read UTF-8."},
    {"repeat": {"text": "Nothing more to do."}},
]


@pytest.fixture
def session(tmp_path: Path) -> Iterator[tuple[TmuxSession, Path]]:
    repo = init_repo(tmp_path / "project")
    server = FakeServerProcess(SCRIPT, tmp_path)
    env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": server.base_url, "TERM": "xterm-256color", "COLORTERM": "truecolor"}
    terminal = TmuxSession([sys.executable, "-m", "tui_agent.cli", "--project", str(repo)], env=env, cwd=repo)
    try:
        yield terminal, repo
    finally:
        terminal.close()
        server.stop()


def subjects(repo: Path) -> list[str]:
    return git(repo, "log", "--format=%s").splitlines()


def wait_git(repo: Path, subject: str, terminal: TmuxSession, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if subjects(repo)[0].startswith(subject):
            return
        time.sleep(0.1)
    raise AssertionError(f"no commit {subject!r}; log: {subjects(repo)[:5]}; the screen was:\n{terminal.screen()}")


def test_scripted_session_in_tmux(session: tuple[TmuxSession, Path]) -> None:
    terminal, repo = session
    before = user_state(repo)
    terminal.wait_for(lambda s: "Conversation" in s and "Catalog" in s and "⎇ main" in s and "sandbox" in s, timeout=20, what="the app")

    terminal.type("count the words in README.md")
    terminal.send("Enter")
    screen = terminal.wait_text("The tool is in the catalog.", timeout=30)
    assert "create_tool count_words · 14 lines · tests 1/1 passed" in screen  # the create_tool block, folded to one line
    assert "count_words(path='README.md')  ok" in screen
    terminal.wait_for(lambda s: "count_words" in s.split("Catalog", 2)[-1] and " 1 " in s, what="the tool with 1 call in the catalog pane")
    assert subjects(repo)[0] == "tuiagent: add tool count_words"

    terminal.type("make it read UTF-8")
    terminal.send("Enter")
    terminal.wait_text("Updated count_words to read UTF-8.", timeout=30)
    wait_git(repo, "tuiagent: update tool count_words", terminal)

    terminal.send("F3")
    terminal.wait_for(lambda s: "v View" in s, what="catalog bindings in the footer")
    terminal.send("u")
    terminal.wait_text("Revert tool count_words to its previous version")  # it says what it will do, and asks
    terminal.send("y")
    wait_git(repo, "tuiagent: revert tool count_words", terminal)
    assert (repo / ".agent" / "tools" / "count_words.py").read_text() == TOOL_V1
    terminal.wait_text("reverted")

    terminal.send("d")
    terminal.wait_text("Prune tool count_words?")
    terminal.send("y")
    wait_git(repo, "tuiagent: prune tool count_words", terminal)
    assert not (repo / ".agent" / "tools" / "count_words.py").exists()
    terminal.wait_for(lambda s: "0 tools" in s, what="the catalog without the tool")

    terminal.send("F2")
    terminal.type("/restore count_words")
    terminal.send("Enter")
    wait_git(repo, "tuiagent: restore tool count_words", terminal)
    terminal.wait_for(lambda s: "1 tools" in s, what="the tool back in the catalog")

    terminal.send("C-q")
    terminal.wait_text("EXITED-0", timeout=15)
    assert user_state(repo) == before
