"""`tuiagent mcp serve`: the live catalog as an MCP server (official SDK, low-level Server) over stdio."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable
from importlib import metadata
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.session import ServerSession
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged

from tui_agent.core.catalog.errors import PipelineError
from tui_agent.core.catalog.models import ToolSpec
from tui_agent.core.errors import PROJECT_FAILURES
from tui_agent.core.mcp.cancel import cancelled_result, until_cancelled
from tui_agent.core.mcp.changes import CatalogListenerFeed, ChangeFeed
from tui_agent.core.mcp.config import ServeOptions
from tui_agent.core.mcp.definitions import OutputSchemas, tool_definition
from tui_agent.core.mcp.wire import answering_malformed
from tui_agent.core.mcp.results import pipeline_error_result, run_result, text_result
from tui_agent.core.auditlog import AuditLog
from tui_agent.core.sandbox import TIER_BUBBLEWRAP, RunResult
from tui_agent.core.tending.peer_calls import PeerCallLog
from tui_agent.core.content import JsonObject, JsonSchema

if TYPE_CHECKING:
    from tui_agent.core.catalog.api import Catalog

log = logging.getLogger(__name__)
RUN_PYTHON = "run_python"
RUN_PYTHON_DESCRIPTION = (
    "Run a Python snippet in tuiagent's sandbox with every catalog tool importable by name "
    "(`from tool_name import tool_name`); the value of the last expression is returned. The project is read-only.")
INSTRUCTIONS = ("The tools of this server are written by tuiagent's agent for this project and change while you work: "
                "the server sends notifications/tools/list_changed when one is added, edited, pruned or reverted.")


def _version() -> str:
    try:
        return metadata.version("tuiagent")
    except metadata.PackageNotFoundError:
        return "0"


def listed_specs(catalog: Catalog) -> list[ToolSpec]:
    """The tools offered: every registered tool with a good version whose file on disk is not broken."""
    return [entry.spec for entry in catalog.registry.entries() if entry.spec is not None and entry.error is None]


RUN_PYTHON_TOOL = types.Tool(
    name=RUN_PYTHON, title="Run Python", description=RUN_PYTHON_DESCRIPTION,
    input_schema={"type": "object", "properties": {"code": {"type": "string"}}, "required": ["code"],
                  "additionalProperties": False},
    annotations=types.ToolAnnotations(title="Run Python", read_only_hint=True, destructive_hint=False,
                                      open_world_hint=False))


class _Link:
    """One client connection: the latest request's session, whose standalone channel is the connection's.

    The SDK builds a new ServerSession for every request, so sessions are not connections: remembering each one
    would send every later notification once per request the client ever made."""

    def __init__(self) -> None:
        self.session: ServerSession | None = None


class CatalogServer:
    """Lists and calls catalog tools through the catalog (sandbox, limits, audit log) and announces list changes."""

    def __init__(self, catalog: Catalog, options: ServeOptions, feed: ChangeFeed | None = None) -> None:
        self.catalog = catalog
        self.options = options
        self.feed = feed or CatalogListenerFeed(catalog)
        self.bus = InMemorySubscriptionBus()
        self._links: list[_Link] = []
        self.output_schemas = OutputSchemas()
        self.audit = AuditLog(catalog.project.runs_dir)  # the sandbox's log file: a cancelled run leaves its line too
        self.calls = PeerCallLog(catalog.project, "mcp")  # what the repeated-chain miner reads, as a turn's calls
        self._announced = self._fingerprint()
        self._dirty = asyncio.Event()
        self.feed.subscribe(self._dirty.set)

    # the list and its changes ----------------------------------------------------------
    def tools(self) -> list[types.Tool]:
        tools = [tool_definition(spec, self._output_schema(spec.name)) for spec in listed_specs(self.catalog)]
        if self.options.run_python:
            tools.append(RUN_PYTHON_TOOL)
        return tools

    def _output_schema(self, name: str) -> JsonSchema | None:
        entry = self.catalog.registry.get(name)
        if entry is None or entry.spec is None:
            return None
        return self.output_schemas.get(entry.spec, entry.runnable)

    def _fingerprint(self) -> tuple[tuple[Any, ...], ...]:
        return tuple((s.name, s.source_sha, s.description, json.dumps(s.input_schema, sort_keys=True), s.writes, s.network)
                     for s in listed_specs(self.catalog))

    async def _sync(self) -> None:
        """Pick up tool files changed on disk that the watcher has not handled yet (as the agent does per request)."""
        names = {path.stem for path in self.catalog.project.tools_dir.glob("*.py")} | set(self.catalog.registry.names())
        try:
            await self.catalog.outside_edit(names)
        except PROJECT_FAILURES:  # the catalog keeps its last good state
            log.exception("reloading changed tool files failed")

    async def announce_changes(self) -> None:
        """Until cancelled: after each catalog event, send tools/list_changed when the offered list differs."""
        while True:
            await self._dirty.wait()
            self._dirty.clear()
            fingerprint = self._fingerprint()
            if fingerprint == self._announced:
                continue
            self._announced = fingerprint
            for link in list(self._links):  # once per connection, however many requests it made
                if link.session is not None:
                    await link.session.send_tool_list_changed()  # best effort: never raises
            await self.bus.publish(ToolsListChanged())

    def _server_for(self, link: _Link) -> Server[Any]:
        """A low-level Server for one connection: its handlers know which connection they answer."""

        async def initialized(ctx: ServerRequestContext[Any], params: Any) -> None:
            link.session = ctx.session

        async def list_tools(ctx: ServerRequestContext[Any], params: Any) -> types.ListToolsResult:
            link.session = ctx.session
            return await self._list_tools()

        async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
            link.session = ctx.session
            return await self._call_tool(params)

        server: Server[Any] = Server("tuiagent", version=_version(), instructions=INSTRUCTIONS,
                                     on_list_tools=list_tools, on_call_tool=call_tool,
                                     on_subscriptions_listen=ListenHandler(self.bus))
        server.add_notification_handler("notifications/initialized", types.NotificationParams, initialized)
        return server

    async def _list_tools(self) -> types.ListToolsResult:
        await self._sync()
        return types.ListToolsResult(tools=self.tools())

    # calls -------------------------------------------------------------------------------
    async def _call_tool(self, params: types.CallToolRequestParams) -> types.CallToolResult:
        name, arguments = params.name, dict(params.arguments or {})
        if name == RUN_PYTHON and self.options.run_python:
            return await self._run_python(arguments)
        await self._sync()
        entry = self.catalog.registry.get(name)
        if entry is not None and entry.error is not None:
            return pipeline_error_result(name, entry.error)
        if entry is None or entry.spec is None:
            hint = " (run_python is offered only with `tuiagent mcp serve --run-python`)" if name == RUN_PYTHON else ""
            return text_result(f"no tool named {name!r} in this catalog{hint}; list the tools again", is_error=True)
        spec = entry.spec
        refusal = self.options.refusal(name, writes=spec.writes, network=bool(spec.network))
        if refusal is not None:
            return text_result(refusal, is_error=True)
        call = self.catalog.call_tool(name, arguments, allow_network=bool(spec.network), allow_writes=spec.writes)
        try:
            result = await self._recorded(name, arguments, until_cancelled(
                call, lambda ms: self._audit_cancelled(f"tool {name}", spec.source_sha, ms, args=arguments, module=name)))
        except PipelineError as error:  # arguments that do not fit the schema, or the tool vanished meanwhile
            return text_result(f"{name}: {error.message}", is_error=True)
        return run_result(result, name=name, output_schema=self.output_schemas.get(spec, entry.runnable))

    async def _recorded(self, name: str, arguments: JsonObject, work: Awaitable[RunResult]) -> RunResult:
        """Await a call another agent made, recorded whatever its outcome (usage counts are the catalog's own)."""
        call_id = self.calls.started(name, arguments)
        started = time.perf_counter()
        outcome, failed = "cancelled", True
        try:
            result = await work
            failed = not result.ok
            outcome = f"{result.error_kind}: {result.error}" if failed else str(result.value)
            return result
        except PipelineError as error:
            outcome = error.message
            raise
        finally:
            self.calls.finished(call_id, name, outcome, is_error=failed, duration_ms=(time.perf_counter() - started) * 1000)

    def _audit_cancelled(self, label: str, version: str | None, duration_ms: float, **fields: Any) -> None:
        self.audit.record(label=label, version=version, kind="exec" if label == RUN_PYTHON else "call",
                          result=cancelled_result(self.catalog.sandbox.tier, duration_ms), **fields)

    async def _run_python(self, arguments: JsonObject) -> types.CallToolResult:
        code = arguments.get("code")
        if not isinstance(code, str) or not code.strip():
            return text_result("run_python needs `code`: a non-empty Python snippet", is_error=True)
        if self.catalog.sandbox.tier != TIER_BUBBLEWRAP and not self.options.allow_writes:
            return text_result("refused: this sandbox tier cannot keep project files read-only for run_python; install "
                               "bubblewrap, or allow it with `tuiagent mcp serve --run-python --allow-writes`", is_error=True)
        await self._sync()
        result = await self._recorded(RUN_PYTHON, {"code": code}, until_cancelled(
            self.catalog.run_python(code, allow_writes=False), lambda ms: self._audit_cancelled(RUN_PYTHON, None, ms, code=code)))
        return run_result(result)

    # serving -----------------------------------------------------------------------------
    async def serve(self, read_stream: Any, write_stream: Any) -> None:
        """Serve one connection, watching the catalog meanwhile; returns when the client closes the connection."""
        background = [asyncio.create_task(self.feed.run()), asyncio.create_task(self.announce_changes())]
        link = _Link()
        self._links.append(link)
        try:
            server = self._server_for(link)
            options = server.create_initialization_options(NotificationOptions(tools_changed=True))
            await server.run(read_stream, write_stream, options)
        finally:
            self._links.remove(link)
            for task in background:
                task.cancel()
            await asyncio.gather(*background, return_exceptions=True)


async def serve_stdio(project_root: str, options: ServeOptions, *, sandbox_tier: str | None = None) -> None:
    """Open the project's sandbox and catalog and serve them on stdin/stdout until the client disconnects."""
    from mcp.server.stdio import stdio_server

    from tui_agent.core.catalog.api import Catalog
    from tui_agent.core.project import Project
    from tui_agent.core.sandbox import Sandbox

    project = Project.at(project_root)
    sandbox = await Sandbox.start(project, tier=sandbox_tier)
    try:
        catalog = await Catalog.open(project, sandbox)
        try:
            async with stdio_server() as (read_stream, write_stream), \
                    answering_malformed(read_stream, write_stream) as messages:
                await CatalogServer(catalog, options).serve(messages, write_stream)
        finally:
            await catalog.aclose()
    finally:
        await sandbox.aclose()
