"""Manual runs from the catalog pane of tools that declare WRITES = True or NETWORK = True: confirm, then run with that access."""

from __future__ import annotations

import asyncio
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.gitrepo import git, user_state
from tests.ui_support import SIZE, make_app, ready, row_names, wait_until
from tui_agent.ui.screens.argument_form import ArgumentFormScreen
from tui_agent.ui.screens.confirm import ConfirmScreen
from tui_agent.ui.widgets.messages import ToolCallBlock
from tui_agent.core.runtime_state import catalog_of


@pytest.fixture(autouse=True)
def no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


NOTE_WRITER = textwrap.dedent(
    '''
    WRITES = True


    def write_note(text: str) -> str:
        """Write text to NOTE.md in the project.

        Args:
            text: what to write
        """
        with open("NOTE.md", "w", encoding="utf-8") as handle:
            handle.write(text)
        return "written"
    '''
)

PORT_READER = textwrap.dedent(
    '''
    import socket

    NETWORK = True


    def read_port(port: int) -> str:
        """Ask the sandbox's network proxy for a TCP server on this machine (issue 33: it refuses).

        Args:
            port: the server's port on 127.0.0.1
        """
        with socket.create_connection(("127.0.0.1", 3128), timeout=5) as connection:
            connection.sendall(f"CONNECT 127.0.0.1:{port} HTTP/1.1\\r\\n\\r\\n".encode())
            return connection.recv(300).decode()
    '''
)


@pytest.fixture
async def greeting_server() -> AsyncIterator[int]:
    """A real TCP server on 127.0.0.1 that says hello to whoever connects."""

    async def greet(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"hello from the host")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(greet, "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()
        await server.wait_closed()


async def open_form(pilot, app, name: str, value: str) -> None:  # type: ignore[no-untyped-def]
    await wait_until(pilot, lambda: name in row_names(app), message=f"{name} in the catalog pane")
    app.action_show_pane("catalog")
    assert app.catalog_pane.select(name)
    await pilot.pause()
    await pilot.press("r")
    await wait_until(pilot, lambda: isinstance(app.screen, ArgumentFormScreen), message="the argument form")
    field = next(iter(app.screen.fields))
    app.screen.query_one(f"#arg-{field.name}").value = value
    await pilot.press("ctrl+s")
    await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), message="the run confirmation")


def question_text(app) -> str:  # type: ignore[no-untyped-def]
    screen = app.screen
    return f"{screen.question}\n{screen.query_one('#confirm-detail').render()}"


def tool_blocks(app) -> list[ToolCallBlock]:  # type: ignore[no-untyped-def]
    return [widget for widget in app.conversation.children if isinstance(widget, ToolCallBlock)]


async def test_a_writes_tool_runs_with_the_project_writable_after_a_confirmation(dirty_repo: Path) -> None:
    before = user_state(dirty_repo)
    app = make_app(dirty_repo)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await catalog_of(app.runtime).save("write_note", NOTE_WRITER)
        await wait_until(pilot, lambda: [row.access for row in app.catalog_pane.rows] == ["writes"], message="the writes marker")
        assert "writes" in str(app.catalog_pane.table.get_row_at(0)[2])

        await open_form(pilot, app, "write_note", "cancelled")
        assert "change project files" in question_text(app) and '"text": "cancelled"' in question_text(app)
        await pilot.press("n")
        await wait_until(pilot, lambda: not isinstance(app.screen, ConfirmScreen), message="the confirmation to close")
        await pilot.pause(0.3)
        assert not tool_blocks(app) and not (dirty_repo / "NOTE.md").exists() and user_state(dirty_repo) == before

        await open_form(pilot, app, "write_note", "approved")
        await pilot.press("y")
        await wait_until(pilot, lambda: any(block.entry.result for block in tool_blocks(app)), timeout=20, message="the run's result")
        block = tool_blocks(app)[0]
        assert block.entry.result == '"written"' and not block.entry.is_error, block.entry.result
        assert (dirty_repo / "NOTE.md").read_text() == "approved"
        assert git(dirty_repo, "status", "--porcelain", "--", "NOTE.md").startswith("??")  # written, never staged or committed


async def test_a_network_tool_reaches_the_network_only_after_a_confirmation(repo: Path, greeting_server: int) -> None:
    app = make_app(repo)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await catalog_of(app.runtime).save("read_port", PORT_READER)
        await wait_until(pilot, lambda: [row.access for row in app.catalog_pane.rows] == ["network"], message="the network marker")
        plain = await catalog_of(app.runtime).call_tool("read_port", {"port": greeting_server})
        assert not plain.ok  # the catalog's default: no network

        await open_form(pilot, app, "read_port", str(greeting_server))
        assert "use the network" in question_text(app) and "change project files" not in question_text(app)
        await pilot.press("y")
        await wait_until(pilot, lambda: any(block.entry.result for block in tool_blocks(app)), timeout=20, message="the run's result")
        block = tool_blocks(app)[0]
        # The grant is a way out (the proxy answers) that never reaches this machine's own services.
        assert not block.entry.is_error and "403 Forbidden" in block.entry.result, block.entry.result
        assert "hello from the host" not in block.entry.result
