"""A hostile repository opened in a real terminal: the trust screen comes first; nothing runs until Trust."""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path

import pytest

from tests.e2e.tmux_session import FakeServerProcess, TmuxSession
from tests.hostile.repo import hostile_repo, recipe

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

ANSWER = "Recipe prompt answered."


def open_hostile(tmp_path: Path, *, width: int = 160, height: int = 48) -> tuple[TmuxSession, FakeServerProcess, Path]:
    marker = tmp_path / "boot-ran"
    repo = hostile_repo(tmp_path / "p", {
        ".agent/recipes/boot.toml": recipe("session_start", 'prompt = "run the setup"'),
        ".agent/recipes/boot_tool.toml": recipe("session_start", 'tool = "setup"'),
        ".agent/tools/setup.py": f'def setup() -> str:\n    """Set the project up."""\n    open({str(marker)!r}, "w").write("ran")\n'
                                 '    return "ok"\n',
    })
    server = FakeServerProcess([{"text": ANSWER}, {"repeat": {"text": "Nothing more."}}], tmp_path)
    config = tmp_path / "xdg"  # nothing trusted
    config.mkdir()
    env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": server.base_url, "TERM": "xterm-256color",
           "XDG_CONFIG_HOME": str(config)}
    terminal = TmuxSession([sys.executable, "-m", "tui_agent.cli", "--project", str(repo), "--sandbox-tier", "rlimits"],
                           env=env, cwd=repo, width=width, height=height)
    return terminal, server, marker


def test_continue_restricted_in_tmux_runs_no_recipe_then_slash_trust_reopens_trusted_and_the_recipes_run(tmp_path: Path) -> None:
    terminal, server, marker = open_hostile(tmp_path)
    try:
        screen = terminal.wait_text("Continue restricted", timeout=30)
        assert "boot: on session_start" in screen and "run the setup" in screen
        terminal.send("r")
        terminal.wait_text("restricted mode", timeout=30)
        time.sleep(2)  # time enough for a session_start recipe to have run, were it let
        screen = terminal.screen()
        assert ANSWER not in screen and not marker.exists()
        terminal.type("/trust")
        terminal.send("Enter")
        terminal.wait_text("Continue restricted", timeout=30)  # the trust screen again
        terminal.send("t")
        terminal.wait_text("Trusted: the project reopened", timeout=60)
        terminal.wait_text(ANSWER, timeout=60)  # the session_start recipes fire now
        deadline = time.monotonic() + 30
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert marker.exists()
    finally:
        terminal.close()
        server.stop()


def test_at_80x24_the_trust_screen_keeps_its_answers_on_screen_and_trust_runs_the_recipes(tmp_path: Path) -> None:
    """The list of what the project would get scrolls; Trust and Continue restricted never fall off the screen. Trust
    (t) then lets the session_start recipes run (Continue restricted is the other test's, at 160×48)."""
    terminal, server, marker = open_hostile(tmp_path, width=80, height=24)
    try:
        screen = terminal.wait_for(lambda s: "Do you trust" in s and "Trust (t)" in s and "Continue restricted (r)" in s, timeout=30,
                                   what="the trust screen with both answers")
        assert "Symlinks under .agent/" not in screen  # the list is longer than the screen: it scrolls, the answers stay
        terminal.send("t")
        terminal.wait_text(ANSWER, timeout=60)
        deadline = time.monotonic() + 30
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert marker.exists()
    finally:
        terminal.close()
        server.stop()
