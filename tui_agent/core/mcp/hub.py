"""The session's MCP servers: started together, their tools under API-valid names, calls, counts and status rows."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tui_agent.core.listeners import tell
from tui_agent.core.mcp.models import CallOutcome, McpServerError, RemoteTool
from tui_agent.core.mcp.config import ServerConfig, load_server_configs
from tui_agent.core.mcp.naming import assign_names
from tui_agent.core.mcp.trust import is_trusted, untrusted_message
from tui_agent.core.project import Project
from tui_agent.core.content import JsonObject, JsonSchema, ToolDefinition

if TYPE_CHECKING:
    from tui_agent.core.mcp.client import ElicitAsk, ServerConnection
    from tui_agent.core.mcp.sampling import Sampler

READY_WAIT_S = 5.0
"""How long a session's first request waits for MCP servers to be ready; one that hangs is given up on later
(client.START_TIMEOUT_S) without holding the session back."""


@dataclass(frozen=True)
class McpTool:
    """One MCP tool as offered to the agent: `name` is the API name (`mcp__server__tool`)."""

    name: str
    server: str
    tool: str
    description: str
    input_schema: JsonSchema
    calls: int = 0

    def to_api(self) -> ToolDefinition:
        schema: JsonSchema = self.input_schema if self.input_schema.get("type") == "object" else {"type": "object", "properties": {}}
        description = (f"[MCP server {self.server}] {self.description}".strip()
                       + f"\n(In run_python: `from {self.name} import {self.name}`; call it with keyword arguments.)")
        return {"name": self.name, "description": description, "input_schema": schema}


@dataclass(frozen=True)
class ServerRow:
    """A server's line in the catalog pane and `tuiagent mcp list`."""

    name: str
    status: str
    error: str | None
    tools: tuple[McpTool, ...]
    calls: int


class McpHub:
    """Owns the connections; `tools()` and `call()` are what the agent, run_python's bridge and the UI use."""

    def __init__(self, project: Project, configs: list[ServerConfig], problems: list[str] | None = None) -> None:
        self.project = project
        self.connections: dict[str, ServerConnection] = {}
        if configs:  # the SDK is imported only when a server is configured
            from tui_agent.core.mcp.client import ServerConnection

            self.connections = {c.name: ServerConnection(c, str(project.root), self._changed) for c in configs}
        self.problems = list(problems or [])  # configuration errors: each server skipped with its reason
        self._calls: dict[str, int] = {}
        self._listeners: list[Callable[[], None]] = []
        self._names: dict[tuple[str, str], str] = {}
        self._by_name: dict[str, tuple[str, RemoteTool]] = {}
        self._starting: set[asyncio.Task[None]] = set()

    @classmethod
    async def start(cls, project: Project, *, wait_s: float | None = READY_WAIT_S) -> "McpHub":
        """Read `.mcp.json` and `[mcp.servers]` and start every server concurrently; failures are kept as rows.

        Returns when every server is ready or after `wait_s` (None: until each is ready or given up on): a server
        still starting goes on in the background, and its tools join the session when it is ready."""
        configs, problems = load_server_configs(project)
        hub = cls(project, configs, problems)
        for config in configs:
            if not is_trusted(project, config):
                hub.connections[config.name].hold(untrusted_message(config, project))
        await hub._start_all(wait_s)
        return hub

    @classmethod
    async def start_given(cls, project: Project, configs: list[ServerConfig], problems: list[str], *,
                          wait_s: float | None = READY_WAIT_S) -> "McpHub":
        """Start servers the caller named on the command line (`--mcp-config`): approved by being given."""
        hub = cls(project, configs, problems)
        await hub._start_all(wait_s)
        return hub

    async def _start_all(self, wait_s: float | None) -> None:
        starting = [c for c in self.connections.values() if c.status == "starting"]
        self._starting = {asyncio.create_task(c.start(), name=f"start MCP server {c.config.name}") for c in starting}
        if self._starting:
            await asyncio.wait(self._starting, timeout=wait_s)
        self._rename()

    def still_starting(self) -> list[str]:
        return sorted(name for name, c in self.connections.items() if c.status == "starting")

    def set_elicitation(self, ask: ElicitAsk | None) -> None:
        """Who answers a server's request for input (elicitation): the TUI's form; None declines (headless)."""
        for connection in self.connections.values():
            connection.ask = ask

    def set_sampling(self, sample: Sampler | None) -> None:
        """Who answers a server's sampling request (core/mcp/sampling.py); None declines (no model)."""
        for connection in self.connections.values():
            connection.sample = sample

    def add_listener(self, callback: Callable[[], None]) -> None:
        """Called when a server's status or tool list changes (e.g. it died)."""
        self._listeners.append(callback)

    def _changed(self) -> None:
        self._rename()
        for callback in list(self._listeners):
            tell(callback, "MCP listener")

    def _rename(self) -> None:
        pairs = [(name, tool.name) for name, c in self.connections.items() if c.status == "running" for tool in c.tools]
        self._names = assign_names(pairs)
        tools = {(name, tool.name): tool for name, c in self.connections.items() for tool in c.tools}
        self._by_name = {api: (pair[0], tools[pair]) for pair, api in self._names.items()}

    # the agent's view ------------------------------------------------------------------
    async def refresh(self) -> list[str]:
        """Honour tools/list_changed: list the stale servers again. Returns warnings for servers that failed."""
        warnings = []
        for name, connection in self.connections.items():
            if connection.stale and connection.status == "running":
                try:
                    await connection.relist()
                except McpServerError as error:
                    warnings.append(f"MCP server {name}: listing its tools failed: {error}")
        self._rename()
        return warnings

    def tools(self) -> list[McpTool]:
        return [McpTool(api, server, tool.name, tool.description, tool.input_schema, self._calls.get(api, 0))
                for api, (server, tool) in sorted(self._by_name.items())]

    def get(self, api_name: str) -> McpTool | None:
        found = self._by_name.get(api_name)
        if found is None:
            return None
        server, tool = found
        return McpTool(api_name, server, tool.name, tool.description, tool.input_schema, self._calls.get(api_name, 0))

    async def call(self, api_name: str, arguments: JsonObject) -> CallOutcome:
        """Call by API name; raises McpServerError when the tool is unknown or its server cannot answer."""
        found = self._by_name.get(api_name)
        if found is None:
            raise McpServerError(f"no MCP tool named {api_name!r} (the servers offer: {', '.join(sorted(self._by_name)) or 'none'})")
        server, tool = found
        self._calls[api_name] = self._calls.get(api_name, 0) + 1
        try:
            return await self.connections[server].call(tool.name, arguments)
        finally:
            self._changed()

    def rows(self) -> list[ServerRow]:
        tools = self.tools()
        rows = []
        for name, connection in sorted(self.connections.items()):
            mine = tuple(t for t in tools if t.server == name)
            rows.append(ServerRow(name, connection.status, connection.error, mine, sum(t.calls for t in mine)))
        return rows

    def failures(self) -> list[str]:
        """One line per server that failed or exited, and per configuration problem (for the header and notices)."""
        lines = [f"MCP server {row.name} {row.status}: {row.error}" for row in self.rows()
                 if row.status in ("failed", "exited", "untrusted")]
        return self.problems + lines

    def notes(self) -> list[str]:
        """What the servers did that the person should hear of once: noise on stdout, tools not offered, input
        asked for and declined, a server still starting."""
        waiting = [f"MCP server {name} is still starting: its tools join when it is ready" for name in self.still_starting()]
        return [note for connection in self.connections.values() for note in connection.notes] + waiting

    async def aclose(self) -> None:
        for task in self._starting:
            task.cancel()
        await asyncio.gather(*(connection.aclose() for connection in self.connections.values()), return_exceptions=True)
