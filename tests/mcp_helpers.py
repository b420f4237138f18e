"""Helpers for the MCP tests: a project with catalog tools, and the official SDK client on a served catalog."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import mcp_types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.catalog_support import tool_source
from tui_agent.core.catalog.api import Catalog
from tui_agent.core.project import Project
from tui_agent.core.sandbox import Sandbox

WRITER_SOURCE = '''"""Write a note into the project."""

WRITES = True


def write_note(text: str) -> str:
    """Write mcp-note.txt.

    Args:
        text: What to write.
    """
    with open("mcp-note.txt", "w") as handle:
        handle.write(text)
    return "written"
'''


async def seed_catalog(repo: Path, tools: dict[str, str]) -> None:
    """Save tools through the real pipeline (sandbox validation, git commit), then close everything."""
    project = Project.at(repo)
    sandbox = await Sandbox.start(project, warm_workers=1)
    try:
        catalog = await Catalog.open(project, sandbox)
        try:
            for name, source in tools.items():
                await catalog.save(name, source, author="test")
        finally:
            await catalog.aclose()
    finally:
        await sandbox.aclose()


class Notifications:
    """Collects the server's notifications with their arrival time."""

    def __init__(self) -> None:
        self.list_changed: list[float] = []
        self.event = asyncio.Event()

    async def __call__(self, message: object) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self.list_changed.append(time.perf_counter())
            self.event.set()

    async def wait(self, count: int, timeout: float = 15.0) -> float:
        """Wait until `count` list_changed notifications arrived; the arrival time of the latest."""
        deadline = time.monotonic() + timeout
        while len(self.list_changed) < count:
            self.event.clear()
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"only {len(self.list_changed)} of {count} list_changed notifications arrived"
            try:
                await asyncio.wait_for(self.event.wait(), remaining)
            except asyncio.TimeoutError:
                pass
        return self.list_changed[-1]


def serve_parameters(repo: Path, *flags: str) -> StdioServerParameters:
    env = {key: value for key, value in os.environ.items() if key in ("PATH", "HOME", "LANG", "PYTHONPATH", "TMPDIR",
                                                                      "XDG_CONFIG_HOME")}  # where the test folder is trusted
    return StdioServerParameters(command=sys.executable, args=["-m", "tui_agent.cli", "--project", str(repo), "mcp",
                                                               "serve", *flags], env=env, cwd=str(repo))


@asynccontextmanager
async def served(repo: Path, *flags: str) -> AsyncIterator[tuple[ClientSession, Notifications, types.InitializeResult]]:
    """`tuiagent mcp serve` started by the SDK's stdio client, with an initialized ClientSession."""
    notifications = Notifications()
    async with stdio_client(serve_parameters(repo, *flags)) as (read, write):
        async with ClientSession(read, write, message_handler=notifications) as session:
            initialized = await asyncio.wait_for(session.initialize(), 60)
            yield session, notifications, initialized


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


__all__ = ["WRITER_SOURCE", "Notifications", "seed_catalog", "served", "serve_parameters", "text_of", "tool_source"]


def warm_server_bytecode() -> None:
    """Compile the time (and git) server's imports into the folder MCP servers keep their bytecode in (outside the project,
    loadpaths.bytecode_folder): a cold first start compiles them there, seconds on a loaded machine, past the
    session's READY_WAIT_S; the tests using it are about what happens after a start."""
    import subprocess

    from tui_agent.core.mcp.loadpaths import bytecode_folder

    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}  # as servers get it
    env["PYTHONPYCACHEPREFIX"] = str(bytecode_folder())
    code = ("import importlib.util, mcp_server_time.server\n"
            "if importlib.util.find_spec('mcp_server_git'): import mcp_server_git.server")
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=180)
