"""The MCP servers a client names in `session/new`: stdio ones become the session's servers (given by the person's
editor, like `--mcp-config`); HTTP and SSE ones are refused, as the capabilities say."""

from __future__ import annotations

from typing import Any

from acp import RequestError
from acp.schema import McpServerStdio

from tui_agent.core.mcp.config import ServerConfig


def client_servers(servers: list[Any]) -> list[ServerConfig]:
    configs: list[ServerConfig] = []
    for server in servers:
        if not isinstance(server, McpServerStdio):
            kind = getattr(server, "type", type(server).__name__)
            raise RequestError.invalid_params({"message": f"MCP server {getattr(server, 'name', '?')!r}: {kind} servers "
                                                          "are not supported (mcpCapabilities: stdio only)"})
        configs.append(ServerConfig(name=server.name, command=server.command, args=tuple(server.args),
                                    env={variable.name: variable.value for variable in server.env},
                                    source="the ACP client's session/new"))
    return configs
