"""The approval, catalog, diff and palette screens in a real terminal at 80×24, 120×40 and 200×50: nothing hidden, no overprinted footer.

Each size is one tuiagent session: a turn's approvals first, then the catalog, diff and palette."""

from __future__ import annotations

import asyncio
import re
import shutil
import sys
import time
from pathlib import Path

import pytest

from tests.e2e.tmux_session import FakeServerProcess, TmuxSession
from tests.gitrepo import git, init_repo
from tests.ui_support import tool_source
from tui_agent.core.agent.permissions import deny_all
from tui_agent.core.runtime import open_runtime

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

SUMMARY = "Double a number given on the command line, then print it and explain every step taken on the way there."
CATALOG_KEYS = ("v View", "r Run", "d Prune", "u Revert", "h History", "f Drift", "p Pruned", "/ Filter")


async def two_versions(repo: Path) -> None:
    runtime = await open_runtime(repo, approve=deny_all, sandbox_tier="rlimits")
    try:
        await runtime.workshop.catalog.save("double", tool_source("double", "return x + x", summary=SUMMARY))
        await runtime.workshop.catalog.save("double", tool_source("double", "return 2 * x", summary=SUMMARY))
    finally:
        await runtime.aclose()


def footer(screen: str) -> str:
    return [line for line in screen.splitlines() if line.strip()][-1]


def assert_clean_footer(screen: str, *keys: str) -> None:
    """The footer ends with the palette key and nothing after it; every key named is there whole."""
    line = footer(screen)
    assert re.search(r"▏\^p palette\s*$", line), f"overprinted footer: {line!r}"
    for key in keys:
        assert key in line, f"{key!r} missing from the footer {line!r}"


def catalog_diff_and_palette_fit(terminal: TmuxSession, width: int) -> None:
    terminal.send("F3")
    screen = terminal.wait_for(lambda s: "v View" in footer(s) and "double" in s, what="the catalog focused")
    header = next(line for line in screen.splitlines() if "status" in line and "name" in line)
    assert "summary" in header, header  # every width keeps status, name and the summary
    if width >= 200:
        assert "calls" in header and "last use" in header, header
    row = next(line for line in screen.splitlines() if "double" in line and "unused" in line)
    shown = re.search(r"Double a number[^│]*", row)
    assert shown is not None, row
    assert len(shown.group().strip()) >= {80: 25, 120: 8, 200: 25}[width], row
    assert_clean_footer(screen, *CATALOG_KEYS)

    terminal.send("h")  # the history: newest first, the older version second
    terminal.wait_text("History of double")
    terminal.send("Down", "Enter")
    screen = terminal.wait_for(lambda s: re.search(r"\+\s+return 2 \* x", s) is not None, what="the diff")
    assert re.search(r"-\s+return x \+ x", screen)
    terminal.send("F4", "m")
    if width < 100 or width >= 120:  # a pane under 100 columns: the unified view, saying why
        screen = terminal.wait_text("too narrow for side-by-side")
        assert re.search(r"-\s+return x \+ x", screen)
    # the footer follows the focus a frame or more after the pane's content under load: wait for the diff pane's keys
    assert_clean_footer(terminal.wait_for(lambda s: "m Unified" in footer(s), what="the diff pane's keys in the footer"),
                        "m Unified/side-by-side")
    if width >= 200:  # zoomed, the pane is wide enough: side by side
        terminal.send("F5")
        screen = terminal.wait_text("[side-by-side]")
        line = next(line for line in screen.splitlines() if "return x + x" in line)
        assert "return 2 * x" in line, line  # old and new on one row
        terminal.send("F5")
    terminal.send("m")

    terminal.send("C-p")
    terminal.wait_text("Search for commands")
    terminal.type("undo")
    terminal.wait_for(lambda s: "/undo" in s and "undo the last turn" in s, what="the palette's /undo with its description")
    terminal.send("Escape")
    terminal.wait_for(lambda s: "Search for commands" not in s, what="the palette closed")


NOTES = "".join(f"line {number}\n" for number in range(60))
EDITED = NOTES.replace("line 5\n", "LINE five\n").replace("line 50\n", "LINE fifty\n")
PADDED_COMMAND = "pytest -q tests/" + " " * 300 + "\n" * 20 + "echo TAIL"
APPROVAL_SCRIPT = [
    {"content": [{"type": "tool_use", "name": "write_file", "input": {"path": "notes.txt", "content": EDITED}}]},
    {"content": [{"type": "tool_use", "name": "run_shell", "input": {"command": "pytest -q tests/test_flaky.py -k 'recipe and not slow'"}}]},
    {"content": [{"type": "tool_use", "name": "run_shell", "input": {"command": PADDED_COMMAND}}]},
    {"repeat": {"text": "Nothing more to do."}},
]
EDIT_OPTIONS = ("Allow once", "every write_file call, this session", "every write_file call, this project *", "tell the model why", "Deny (esc)")
SHELL_OPTIONS = ("Allow once", "exact command, this session", "exact command, this project *", "`pytest *`, this session",
                 "`pytest *`, this project *", "every run_shell call, this session", "every run_shell call, this project *",
                 "tell the model why", "Deny (esc)")
PADDED_OPTIONS = ("Allow once", "every run_shell call, this session", "every run_shell call, this project *", "tell the model why",
                  "Deny (esc)")


def the_approval_modal_fits(terminal: TmuxSession, repo: Path) -> None:
    """Every option of an edit's and of a shell command's approval (a padded one too) on screen, inside the frame."""
    terminal.type("tidy notes.txt and run the tests")
    terminal.send("Enter")
    for what, options in (("write", EDIT_OPTIONS), ("shell", SHELL_OPTIONS), ("shell", PADDED_OPTIONS)):
        screen = terminal.wait_for(  # the whole modal: its bottom edge drawn under the title (a capture can come
            lambda s, what=what: "▄▄▄" in s.partition(f"Approve {what}?")[2] and "Deny (esc)" in s,  # mid-frame)
            timeout=40, what=f"the {what} approval")
        assert_whole_modal(screen, options)
        if options is PADDED_OPTIONS:
            assert "echo TAIL" in screen and "19 empty lines" in screen, screen
        title = next(line for line in screen.splitlines() if f"Approve {what}?" in line)
        time.sleep(0.3)  # drawn is not yet focused: a key sent at once could reach the prompt box under load
        terminal.send("n")
        # this modal's own title goes (the next approval may open before a poll sees none)
        terminal.wait_for(lambda s, title=title: title not in s, what="the modal closed")
    terminal.wait_text("Nothing more to do.", timeout=40)
    assert (repo / "notes.txt").read_text() == NOTES


@pytest.mark.parametrize("size", [(80, 24), (120, 40), (200, 50)], ids=lambda size: f"{size[0]}x{size[1]}")
def test_the_catalog_diff_palette_and_approval_modal_fit(size: tuple[int, int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):  # two_versions' runtime: no model
        monkeypatch.delenv(name, raising=False)
    repo = init_repo(tmp_path / "project")
    (repo / "notes.txt").write_text(NOTES)
    git(repo, "add", "notes.txt")
    git(repo, "commit", "-qm", "notes")
    asyncio.run(two_versions(repo))
    server = FakeServerProcess(APPROVAL_SCRIPT, tmp_path)
    env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": server.base_url, "TERM": "xterm-256color",
           "COLORTERM": "truecolor", "XDG_CONFIG_HOME": str(tmp_path / "config")}
    terminal = TmuxSession([sys.executable, "-m", "tui_agent.cli", "--project", str(repo), "--sandbox-tier", "rlimits", "--trust-project"],
                           env=env, cwd=repo, width=size[0], height=size[1])
    try:
        terminal.wait_for(lambda s: "rlimits" in s and "palette" in s, timeout=40, what="the app, open")
        the_approval_modal_fits(terminal, repo)
        catalog_diff_and_palette_fit(terminal, size[0])
    finally:
        terminal.close()
        server.stop()


def assert_whole_modal(screen: str, options: tuple[str, ...]) -> None:
    rows = screen.splitlines()
    top = next(number for number, row in enumerate(rows) if "Approve " in row) - 1
    bottom = next(number for number in range(top + 1, len(rows)) if "▄▄▄" in rows[number])
    assert "▀▀▀" in rows[top], f"the frame's top is clipped:\n{screen}"
    inside = "\n".join(rows[top:bottom])
    for option in options:
        assert option in inside, f"{option!r} is not inside the modal:\n{screen}"
