"""MCP tools for the agent loop: a ToolProvider over the session's McpHub, asking before each tool's first call."""

from __future__ import annotations

import json

from tui_agent.core.agent.permissions import ApprovalRequest
from tui_agent.core.agent.toolbase import ToolContext, ToolFailure, ToolOutput, truncate
from tui_agent.core.events import Event, Notice
from tui_agent.core.mcp.models import McpServerError
from tui_agent.core.mcp.hub import McpHub
from tui_agent.core.content import JsonObject, ToolDefinition


class McpToolProvider:
    """Offers the running servers' tools as `mcp__server__tool`; a server that died is reported once, then absent."""

    def __init__(self, hub: McpHub) -> None:
        self.hub = hub
        self._reported: set[str] = set(hub.failures())  # shown at startup already (runtime problems)

    async def prepare(self) -> list[Event]:
        warnings = await self.hub.refresh()
        fresh = [line for line in [*warnings, *self.hub.failures(), *self.hub.notes()] if line not in self._reported]
        self._reported.update(fresh)
        return [Notice(line, "warning") for line in fresh]

    def definitions(self) -> list[ToolDefinition]:
        return [tool.to_api() for tool in self.hub.tools()]

    def handles(self, name: str) -> bool:
        return self.hub.get(name) is not None

    async def call(self, context: ToolContext, name: str, arguments: JsonObject) -> ToolOutput:
        tool = self.hub.get(name)
        if tool is None:
            raise ToolFailure(f"the MCP tool {name} is no longer offered (its server stopped or changed its tools)")
        await context.require_approval(ApprovalRequest(
            "mcp", name, f"call {tool.tool} on the MCP server {tool.server}", json.dumps(arguments, indent=1)))
        context.permissions.allow_tool(name)  # approved once: later calls of this tool in the session do not ask
        try:
            outcome = await self.hub.call(name, arguments)
        except McpServerError as error:
            raise ToolFailure(str(error)) from None
        text, cut = truncate(outcome.text)
        return ToolOutput(text, is_error=outcome.is_error, truncated=cut, blocks=outcome.blocks)
