"""The TUI with MCP servers: the catalog pane lists servers and their tools (kind `mcp`), the header says which are down."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from tests.test_mcp_client import NOW, configure, private_trust_store, server_pid  # noqa: F401  (fixture)
from tests.ui_support import SIZE, make_app, notifications, ready, row_names, wait_until
from tui_agent.core.runtime_state import mcp_of

pytestmark = pytest.mark.usefixtures("server_bytecode")  # servers start warm (conftest)


@pytest.fixture(autouse=True)
def no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def row(app, name: str):  # type: ignore[no-untyped-def]
    return next(r for r in app.catalog_pane.rows if r.name == name)


async def test_pane_and_header_show_servers_tools_calls_and_deaths(repo: Path) -> None:
    configure(repo)  # `time` (mcp-server-time from PyPI) and `broken` (a command that does not exist)
    app = make_app(repo)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await wait_until(pilot, lambda: NOW in row_names(app), message="the MCP tools in the catalog pane")
        assert row(app, "mcp__time").status == "running" and row(app, "mcp__time").kind == "mcp"
        assert row(app, "mcp__broken").status == "failed" and "/nonexistent/mcp-server" in row(app, "mcp__broken").summary
        assert row(app, NOW).status == "unused"
        assert app.header.mcp == "1/2 up (broken down)" and app.header.mcp_failed
        assert any(e.kind == "notice" and "MCP server broken failed" in e.text for e in app.conversation.entries)

        await mcp_of(app.runtime).call(NOW, {"timezone": "UTC"})
        await wait_until(pilot, lambda: row(app, NOW).calls == 1 and row(app, "mcp__time").calls == 1, message="call counts")

        app.action_show_pane("catalog")
        assert app.catalog_pane.select(NOW)
        await pilot.press("v")  # catalog actions do not apply to MCP tools: said so, nothing breaks
        await wait_until(pilot, lambda: any("comes from an MCP server" in n for n in notifications(app)), message="the notice")

        os.kill(server_pid("mcp_server_time"), signal.SIGKILL)
        await wait_until(pilot, lambda: row(app, "mcp__time").status == "exited", message="the dead server in the pane")
        assert NOW not in row_names(app)
        assert app.header.mcp == "0/2 up (broken, time down)"
