"""The MCP servers a client names in `session/new` or `session/load`: stdio and streamable-HTTP ones become the
session's servers (given by the person's editor, like `--mcp-config`); SSE ones are refused, as the capabilities say."""

from __future__ import annotations

from typing import Any

from acp import RequestError
from acp.schema import HttpMcpServer, McpServerStdio

from tui_agent.core.mcp.config import ServerConfig

SOURCE = "the ACP client's session/new"


def _refused(server: Any, why: str) -> RequestError:
    return RequestError.invalid_params({"message": f"MCP server {getattr(server, 'name', '?')!r}: {why}"})


def _http(server: HttpMcpServer) -> ServerConfig:
    if not server.url.startswith(("http://", "https://")):
        raise _refused(server, f"url {server.url!r} must start with http:// or https://")
    return ServerConfig(name=server.name, command="", source=SOURCE, url=server.url,
                        headers={header.name: header.value for header in server.headers})


def client_servers(servers: list[Any]) -> list[ServerConfig]:
    configs: list[ServerConfig] = []
    for server in servers:
        if isinstance(server, HttpMcpServer):
            configs.append(_http(server))
        elif isinstance(server, McpServerStdio):
            configs.append(ServerConfig(name=server.name, command=server.command, args=tuple(server.args),
                                        env={variable.name: variable.value for variable in server.env},
                                        source=SOURCE))
        else:
            kind = getattr(server, "type", type(server).__name__)
            raise _refused(server, f"{kind} servers are not supported (mcpCapabilities: stdio and streamable "
                                   "http; the deprecated SSE transport is not): give the server's streamable HTTP url")
    return configs
