"""One configured MCP server: started over stdio with the official SDK client, its tools, calls, status and death."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import tempfile
from pathlib import Path
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import anyio
import mcp_types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from pydantic import ValidationError

from tui_agent.core.mcp.config import ServerConfig
from tui_agent.core.mcp.content import outcome_of
from tui_agent.core.mcp.loadpaths import server_environment
from tui_agent.core.mcp.models import CallOutcome, McpServerError, RemoteTool
from tui_agent.core.mcp.sampling import DECLINED, Sampler
from tui_agent.core.content import JsonObject

START_TIMEOUT_S = 30.0
CALL_TIMEOUT_S = 120.0
STDERR_TAIL_CHARS = 600
ElicitAsk = Callable[[str, str, dict[str, Any]], Awaitable[dict[str, Any] | None]]
"""Asks the person for what a server requests: (server, message, requested JSON schema) → the answers, or None."""
NOISE_SAMPLE_CHARS = 120


class _OneLinePerServer(logging.Filter):
    """The SDK logs a traceback for every stdout line of a server that is not JSON-RPC; each connection says it
    once instead (ServerConnection.notes)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != "Failed to parse JSONRPC message from server"


logging.getLogger("mcp.client.stdio").addFilter(_OneLinePerServer())


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
        self.notes: list[str] = []  # things to tell the person once (noise on stdout, tools not offered)
        self.ask: ElicitAsk | None = None  # the TUI's form; None (headless): elicitation is declined
        self.sample: Sampler | None = None  # the session's model, behind an approval; None: sampling is declined
        self._noise = 0
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

    def _transport(self) -> contextlib.AbstractAsyncContextManager[Any]:
        """The SDK's transport: the server's process over stdio, or its URL over streamable HTTP."""
        if self.config.url:
            from tui_agent.core.mcp.http_transport import http_transport

            return http_transport(self.config.url, self.config.headers)
        params = StdioServerParameters(command=self.config.command, args=list(self.config.args),
                                       env=server_environment(dict(self.config.env)), cwd=self.cwd)
        return stdio_client(params, errlog=self._stderr)

    async def _run(self) -> None:
        try:
            async with self._transport() as (read, write):
                watched_send, watched_read = anyio.create_memory_object_stream[Any](0)
                async with anyio.create_task_group() as group:
                    group.start_soon(self._forward, read, watched_send)
                    async with ClientSession(watched_read, write, message_handler=self._on_message,
                                             list_roots_callback=self._roots, sampling_callback=self._sample,
                                             elicitation_callback=self._elicit) as session:
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
            self._fail("failed" if self.status == "starting" else "exited",
                       f"{self.config.url or self.config.command}: {describe(error)}")

    async def _forward(self, read: Any, send: Any) -> None:
        """Pass the server's messages to the session; the stream ending means the server exited."""
        async with send:
            async for message in read:
                if isinstance(message, Exception):  # a line that is not JSON-RPC: said once, then counted
                    self._noisy(message)
                    continue
                await send.send(message)
        if not self._stop.is_set():
            self._fail("exited" if self.status == "running" else "failed", "the server exited")

    def _noisy(self, problem: Exception) -> None:
        self._noise += 1
        if self._noise == 1:
            sample = str(line_of(problem))[:NOISE_SAMPLE_CHARS]
            self.notes.append(f"MCP server {self.config.name} writes text that is not JSON-RPC on stdout (ignored; "
                              f"it should log to stderr): {sample}")
            self.on_change()

    async def _roots(self, context: Any) -> types.ListRootsResult:
        """The one root a server may work in: the project."""
        root = Path(self.cwd).resolve()
        return types.ListRootsResult(roots=[types.Root(uri=root.as_uri(), name=root.name)])  # type: ignore[arg-type]

    async def _elicit(self, context: Any, params: Any) -> types.ElicitResult:
        """A server asking the person for input: the form is shown when someone can answer (the TUI), else
        declined; a URL to open is always declined."""
        message = str(getattr(params, "message", ""))
        schema = getattr(params, "requested_schema", None)
        if self.ask is not None and isinstance(schema, dict) and getattr(params, "url", None) is None:
            answers = await self.ask(self.config.name, message, schema)
            if answers is not None:
                return types.ElicitResult(action="accept", content=answers)
            return types.ElicitResult(action="decline")
        self.notes.append(f"MCP server {self.config.name} asked for input, declined (nobody to ask here): {message[:200]}")
        self.on_change()
        return types.ElicitResult(action="decline")

    async def _sample(self, context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult | types.ErrorData:
        """A server asking the model (sampling/createMessage): see core/mcp/sampling.py."""
        if self.sample is not None:
            return await self.sample(self.config.name, params)
        self.notes.append(f"MCP server {self.config.name} asked the model for a message, declined (no model here)")
        self.on_change()
        return types.ErrorData(code=DECLINED, message="tuiagent declined the sampling request: no model here")

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
            for tool in listed.tools:
                if tool.execution is not None and tool.execution.task_support == "required":
                    note = (f"MCP server {self.config.name}: {tool.name} is not offered (it runs only as a task, "
                            "which tuiagent does not support)")
                    if note not in self.notes:
                        self.notes.append(note)
                    continue
                tools.append(RemoteTool(tool.name, tool.description or "", dict(tool.input_schema or {"type": "object"})))
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

    async def call(self, tool: str, arguments: JsonObject) -> CallOutcome:
        session = self._session()
        with self._as_server_error(f"{self.config.name}/{tool}: "):
            try:
                result = await asyncio.wait_for(session.call_tool(tool, arguments), CALL_TIMEOUT_S)
            except asyncio.TimeoutError:
                raise McpServerError(f"{self.config.name}/{tool} did not answer within {CALL_TIMEOUT_S:.0f} s") from None
        return outcome_of(result)

    async def relist(self) -> None:
        """`refresh`, its failure raised as McpServerError."""
        with self._as_server_error(""):
            await self.refresh()

    @contextlib.contextmanager
    def _as_server_error(self, prefix: str) -> Iterator[None]:
        """Whatever the MCP SDK or the server's process raises becomes an McpServerError (`prefix` + what failed)."""
        try:
            yield
        except McpServerError:
            raise
        except Exception as error:  # edge: the SDK's session and a foreign process: any failure is the server's
            if self.status != "running":
                raise McpServerError(f"the MCP server {self.config.name} {self.status}: {self.error}") from None
            raise McpServerError(f"{prefix}{describe(error)}") from None

    async def aclose(self) -> None:
        self._stop.set()
        if self._task is not None and self.status == "starting":
            self._task.cancel()  # one that hangs before answering initialize is not waited for
        if self._task is not None:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(self._task, 10)
        self._stderr.close()


def line_of(problem: Exception) -> object:
    """The offending line of a parse failure (pydantic keeps it as the error's input), else the error."""
    errors = problem.errors() if isinstance(problem, ValidationError) else []
    return errors[0].get("input", problem) if errors else problem


def describe(error: BaseException) -> str:
    """The innermost useful message of an exception (task groups wrap them)."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
