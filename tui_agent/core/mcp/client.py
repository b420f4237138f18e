"""One configured MCP server: started over stdio with the official SDK client, its tools, calls, status and death."""

from __future__ import annotations

import asyncio
import contextlib
import json
import tempfile
from collections.abc import Callable
from typing import Any

import anyio
import mcp_types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from tui_agent.core.mcp.config import ServerConfig
from tui_agent.core.mcp.models import CallOutcome, McpServerError, RemoteTool

START_TIMEOUT_S = 30.0
CALL_TIMEOUT_S = 120.0
STDERR_TAIL_CHARS = 600


def outcome_of(result: types.CallToolResult) -> CallOutcome:
    parts: list[str] = []
    for block in result.content:
        if isinstance(block, types.TextContent):
            parts.append(block.text)
        else:
            parts.append(f"[{block.type} content: {getattr(block, 'mime_type', None) or 'not shown'}]")
    text = "\n".join(parts)
    value: Any = result.structured_content
    if value is None:
        try:
            value = json.loads(text)
        except ValueError:
            value = text
    return CallOutcome(text or "(empty result)", value, bool(result.is_error))


class ServerConnection:
    """Starts the server in its own task (the SDK's context managers stay in one task), then serves calls."""

    def __init__(self, config: ServerConfig, cwd: str, on_change: Callable[[], None]) -> None:
        self.config = config
        self.cwd = cwd
        self.on_change = on_change
        self.status = "starting"  # starting | running | failed | exited | untrusted
        self.error: str | None = None
        self.tools: list[RemoteTool] = []
        self.stale = False  # the server sent tools/list_changed: list again before the next request
        self.session: ClientSession | None = None
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._stderr = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")

    def hold(self, reason: str) -> None:
        """Do not start this server (e.g. its command is not approved); the row shows why."""
        self.status, self.error = "untrusted", reason

    async def start(self, timeout_s: float = START_TIMEOUT_S) -> None:
        """Start and list the tools; on failure `status` is "failed" and `error` says why (never raises)."""
        self._task = asyncio.create_task(self._run(), name=f"mcp server {self.config.name}")
        try:
            await asyncio.wait_for(self._ready.wait(), timeout_s)
        except asyncio.TimeoutError:
            self._fail("failed", f"did not answer initialize and tools/list within {timeout_s:.0f} s")
            self._stop.set()

    def _stderr_tail(self) -> str:
        with contextlib.suppress(OSError, ValueError):
            self._stderr.flush()
            self._stderr.seek(0)
            text = self._stderr.read().strip()
            return f"; its stderr: {text[-STDERR_TAIL_CHARS:]}" if text else ""
        return ""

    def _fail(self, status: str, message: str) -> None:
        if self.status in ("failed", "exited", "untrusted"):
            return
        self.status, self.error, self.session = status, message + self._stderr_tail(), None
        self._ready.set()
        self.on_change()

    async def _run(self) -> None:
        params = StdioServerParameters(command=self.config.command, args=list(self.config.args),
                                       env=self.config.env or None, cwd=self.cwd)
        try:
            async with stdio_client(params, errlog=self._stderr) as (read, write):
                watched_send, watched_read = anyio.create_memory_object_stream[Any](0)
                async with anyio.create_task_group() as group:
                    group.start_soon(self._forward, read, watched_send)
                    async with ClientSession(watched_read, write, message_handler=self._on_message) as session:
                        await session.initialize()
                        self.session = session
                        await self.refresh()
                        self.status = "running"
                        self._ready.set()
                        self.on_change()
                        await self._stop.wait()
                    group.cancel_scope.cancel()
        except asyncio.CancelledError:
            raise
        except Exception as error:  # OSError (no such command), protocol errors, the process exiting early
            self._fail("failed" if self.status == "starting" else "exited", f"{self.config.command}: {describe(error)}")

    async def _forward(self, read: Any, send: Any) -> None:
        """Pass the server's messages to the session; the stream ending means the server exited."""
        async with send:
            async for message in read:
                await send.send(message)
        if not self._stop.is_set():
            self._fail("exited" if self.status == "running" else "failed", "the server exited")

    async def _on_message(self, message: object) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self.stale = True

    async def refresh(self) -> None:
        """List the tools again (after tools/list_changed), following pagination."""
        session = self._session()
        tools: list[RemoteTool] = []
        cursor: str | None = None
        while True:
            params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
            listed = await asyncio.wait_for(session.list_tools(params=params), CALL_TIMEOUT_S)
            tools.extend(RemoteTool(t.name, t.description or "", dict(t.input_schema or {"type": "object"})) for t in listed.tools)
            cursor = listed.next_cursor
            if not cursor:
                break
        self.tools, self.stale = tools, False
        self.on_change()

    def _session(self) -> ClientSession:
        if self.session is None or self.status not in ("running", "starting"):
            raise McpServerError(f"the MCP server {self.config.name} is not running ({self.status}"
                                 f"{': ' + self.error if self.error else ''})")
        return self.session

    async def call(self, tool: str, arguments: dict[str, Any]) -> CallOutcome:
        session = self._session()
        try:
            result = await asyncio.wait_for(session.call_tool(tool, arguments), CALL_TIMEOUT_S)
        except asyncio.TimeoutError:
            raise McpServerError(f"{self.config.name}/{tool} did not answer within {CALL_TIMEOUT_S:.0f} s") from None
        except Exception as error:
            if self.status != "running":
                raise McpServerError(f"the MCP server {self.config.name} {self.status}: {self.error}") from None
            raise McpServerError(f"{self.config.name}/{tool}: {describe(error)}") from None
        return outcome_of(result)

    async def aclose(self) -> None:
        self._stop.set()
        if self._task is not None:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(self._task, 10)
        self._stderr.close()


def describe(error: BaseException) -> str:
    """The innermost useful message of an exception (task groups wrap them)."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
