"""ctrl+g in a real terminal: the prompt opens in $EDITOR (the app suspends) and what was saved comes back into the box."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from tests.e2e.tmux_session import TmuxSession
from tests.gitrepo import init_repo

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def test_ctrl_g_edits_the_prompt_in_the_editor(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "project")
    editor = tmp_path / "editor.sh"  # an "editor" that rewrites the draft, as a person would, then saves and exits
    editor.write_text('#!/bin/sh\nprintf "%s\\n\\nwith a second paragraph from the editor\\n" "$(cat "$1") (edited)" > "$1"\n')
    editor.chmod(0o755)
    env = {"TERM": "xterm-256color", "EDITOR": str(editor), "XDG_CONFIG_HOME": str(tmp_path / "config")}
    terminal = TmuxSession([sys.executable, "-m", "tui_agent.cli", "--project", str(repo), "--sandbox-tier", "rlimits", "--trust-project"],
                           env=env, cwd=repo, width=100, height=30)
    try:
        terminal.wait_for(lambda s: "rlimits" in s and "No model is configured" in s, timeout=40, what="the app, open")
        terminal.type("fix the flaky test")
        terminal.send("C-g")
        screen = terminal.wait_text("fix the flaky test (edited)")
        assert "with a second paragraph from the editor" in screen and "Conversation" in screen  # back in the app
        terminal.send("C-q")
        screen = terminal.wait_text("EXITED-0")
        assert "tuiagent: nothing to resume from this run." in screen  # the line printed on quit
    finally:
        terminal.close()
