"""A prompt typed at first paint in a real terminal: what the TUI has loaded by the time its request goes out."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.e2e.tmux_session import FakeServerProcess, TmuxSession
from tests.gitrepo import init_repo
from tests.test_runtime_sdk_import import BEFORE_THE_FIRST_REQUEST

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def test_without_mcp_servers_the_tui_loads_no_mcp_types_before_its_first_request(tmp_path: Path) -> None:
    """The MCP SDK's types (pydantic models, tens of ms) are for a connected server's sampling: none is configured."""
    repo = init_repo(tmp_path / "project")
    server = FakeServerProcess([{"repeat": {"text": "Received."}}], tmp_path)
    out = tmp_path / "modules.json"
    env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": server.base_url, "TERM": "xterm-256color"}
    port = str(urlsplit(server.base_url).port)
    terminal = TmuxSession([sys.executable, "-c", BEFORE_THE_FIRST_REQUEST, port, str(out), "--project", str(repo)],
                           env=env, cwd=repo, width=100, height=30)
    try:
        terminal.wait_for(lambda s: "Ask, /help, @file" in s, timeout=30, what="the prompt box")
        terminal.type("hi")
        terminal.send("Enter")
        terminal.wait_text("Received.", timeout=30)
    finally:
        terminal.close()
        server.stop()
    modules = set(json.loads(out.read_text()))
    assert "tui_agent.core.catalog.api" in modules and "tui_agent.ui.app" in modules  # a trusted project's TUI
    assert not any(name == "mcp_types" or name.startswith("mcp_types.") for name in modules)
