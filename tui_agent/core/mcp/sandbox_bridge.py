"""MCP tools for run_python: the runtime side of the sandbox's request channel, with the session's permissions."""

from __future__ import annotations

import json
from typing import Any

from tui_agent.core.agent.permissions import ApprovalRequest, Permissions
from tui_agent.core.mcp.hub import McpHub


class McpSandboxBridge:
    """`import mcp__time__get_current_time` inside run_python; each call crosses to the runtime, which calls the server."""

    def __init__(self, hub: McpHub, permissions: Permissions) -> None:
        self.hub = hub
        self.permissions = permissions

    def modules(self) -> dict[str, str]:
        return {tool.name: f"{tool.description} (MCP server {tool.server}, tool {tool.tool}; call with keyword arguments)"
                for tool in self.hub.tools()}

    async def call(self, name: str, arguments: dict[str, Any]) -> Any:
        tool = self.hub.get(name)
        if tool is None:
            raise LookupError(f"the MCP tool {name} is no longer offered")
        decision = await self.permissions.check(ApprovalRequest(
            "mcp", name, f"call {tool.tool} on the MCP server {tool.server} (from run_python)", json.dumps(arguments, indent=1)))
        if not decision.allowed:
            raise PermissionError(decision.reason)
        self.permissions.allow_tool(name)
        outcome = await self.hub.call(name, arguments)
        if outcome.is_error:
            raise RuntimeError(f"{name}: {outcome.text}")
        return outcome.value


def attach_to_sandbox(hub: McpHub, permissions: Permissions, sandbox: Any) -> None:
    """Open the run_python channel to the session's MCP servers (when there are servers and a sandbox)."""
    if sandbox is not None and hub.connections:
        sandbox.bridge = McpSandboxBridge(hub, permissions)
