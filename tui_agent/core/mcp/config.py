"""MCP settings: `[mcp.serve]` and `[mcp.servers.NAME]` of `.agent/config.toml`, and the project's `.mcp.json`."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from tui_agent.core import projectfs
from tui_agent.core.errors import TuiAgentError
from tui_agent.core.project import Project

MCP_JSON = ".mcp.json"


class McpConfigError(TuiAgentError, ValueError):
    """An MCP setting could not be used; the message says where and how to fix it."""


@dataclass(frozen=True)
class ServeOptions:
    """What `tuiagent mcp serve` may do without a person to ask: WRITES/NETWORK tools and run_python are opt-in."""

    allow_writes: bool = False
    allow_network: bool = False
    run_python: bool = False
    allowed_tools: frozenset[str] = frozenset()

    def merged(self, *, allow_writes: bool = False, allow_network: bool = False, run_python: bool = False,
               allowed_tools: tuple[str, ...] | list[str] = ()) -> "ServeOptions":
        """These options widened by command-line flags (a flag never narrows a config rule)."""
        return ServeOptions(self.allow_writes or allow_writes, self.allow_network or allow_network,
                            self.run_python or run_python, self.allowed_tools | frozenset(allowed_tools))

    def refusal(self, name: str, *, writes: bool, network: bool) -> str | None:
        """Why a call of `name` is refused, with how to allow it; None when it may run."""
        if name in self.allowed_tools:
            return None
        needs = [flag for flag, declared, allowed in (("--allow-writes", writes, self.allow_writes),
                                                      ("--allow-network", network, self.allow_network))
                 if declared and not allowed]
        if not needs:
            return None
        declared = " and ".join(word for word, on in (("WRITES = True", writes), ("NETWORK = True", network)) if on)
        keys = ", ".join(f"{flag[2:].replace('-', '_')} = true" for flag in needs)
        return (f"refused: the tool {name} declares {declared}, and this MCP server has no person to ask. "
                f"To allow it, restart the server with `tuiagent mcp serve {' '.join(needs)}` (or `--allow {name}` for "
                f"this tool only), or add `{keys}` (or `allow = [\"{name}\"]`) under [mcp.serve] in .agent/config.toml.")


HTTP_TYPES = ("http", "streamable-http", "streamableHttp")
"""`type` values of a server reached over streamable HTTP at its `url` (Claude Code writes "http")."""


@dataclass(frozen=True)
class ServerConfig:
    """One MCP server: started as a subprocess over stdio, or (with `url`) reached over streamable HTTP;
    `source` says which file configured it."""

    name: str
    command: str
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    source: str = ""
    url: str = ""
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def launch(self) -> str:
        """What approving this server approves, in words: the command line, or the URL (header names only: their
        values may be secrets)."""
        if self.url:
            names = f" with headers {', '.join(sorted(self.headers))}" if self.headers else ""
            return f"{self.url} (streamable HTTP{names})"
        return " ".join([self.command, *self.args])

    def identity(self) -> list[Any]:
        """What an approval pins (trust fingerprints, project grants): the command, or the URL and headers."""
        base: list[Any] = [self.command, list(self.args), sorted(self.env.items())]
        return base + [self.url, sorted(self.headers.items())] if self.url else base


def _mcp_table(project: Project) -> dict[str, Any]:
    table = project.load_settings().extra.get("mcp", {})
    if not isinstance(table, dict):
        raise McpConfigError("config.toml: [mcp] must be a table")
    return table


def _bool(table: dict[str, Any], key: str, where: str) -> bool:
    value = table.get(key, False)
    if not isinstance(value, bool):
        raise McpConfigError(f"{where}: {key} must be true or false, not {value!r}")
    return value


def load_serve_options(project: Project) -> ServeOptions:
    """`[mcp.serve]` of `.agent/config.toml`: allow_writes, allow_network, run_python, allow = [tool names]."""
    serve = _mcp_table(project).get("serve", {})
    where = "config.toml [mcp.serve]"
    if not isinstance(serve, dict):
        raise McpConfigError(f"{where} must be a table")
    allowed = serve.get("allow", [])
    if not isinstance(allowed, list) or not all(isinstance(item, str) for item in allowed):
        raise McpConfigError(f"{where}: allow must be a list of tool names, e.g. allow = [\"my_tool\"]")
    return ServeOptions(_bool(serve, "allow_writes", where), _bool(serve, "allow_network", where),
                        _bool(serve, "run_python", where), frozenset(allowed))


def _http_server(name: str, raw: dict[str, Any], where: str) -> ServerConfig:
    url, headers = raw.get("url"), raw.get("headers", {})
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise McpConfigError(f"{where}: server {name!r} needs a \"url\" starting with http:// or https://")
    if not isinstance(headers, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in headers.items()):
        raise McpConfigError(f"{where}: server {name!r}: \"headers\" must map names to string values")
    return ServerConfig(name, "", source=where, url=url, headers=dict(headers))


def _server(name: str, raw: Any, where: str) -> ServerConfig:
    if not isinstance(raw, dict):
        raise McpConfigError(f"{where}: server {name!r} must be a table/object with a command or a url")
    kind = raw.get("type", "http" if "url" in raw and "command" not in raw else "stdio")
    if kind in HTTP_TYPES:
        return _http_server(name, raw, where)
    command, args, env = raw.get("command"), raw.get("args", []), raw.get("env", {})
    if kind != "stdio" or "url" in raw:
        raise McpConfigError(f"{where}: server {name!r} has type {kind!r}: tuiagent connects to \"stdio\" servers "
                             "(a command) and \"http\" servers (streamable HTTP at a url), not SSE")
    if not isinstance(command, str) or not command:
        raise McpConfigError(f"{where}: server {name!r} needs a \"command\" (the program to start)")
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise McpConfigError(f"{where}: server {name!r}: \"args\" must be a list of strings")
    if not isinstance(env, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
        raise McpConfigError(f"{where}: server {name!r}: \"env\" must map names to string values")
    return ServerConfig(name, command, tuple(args), dict(env), where)


def load_server_configs(project: Project) -> tuple[list[ServerConfig], list[str]]:
    """Servers from `.mcp.json` ({"mcpServers": {name: {command, args, env}}}) then `[mcp.servers.NAME]`
    (a name in both: config.toml wins). Returns the servers and the problems found (each skipped, not fatal)."""
    servers: dict[str, ServerConfig] = {}
    problems: list[str] = []
    path = project.root / MCP_JSON
    if path.exists():
        try:
            data = json.loads(projectfs.read_text(path))  # a link at .mcp.json is refused, never read through
            table = data.get("mcpServers", {}) if isinstance(data, dict) else None
            if not isinstance(table, dict):
                raise McpConfigError(f"{MCP_JSON}: expected {{\"mcpServers\": {{name: {{command, args, env}}}}}}")
            for name, raw in table.items():
                try:
                    servers[name] = _server(name, raw, MCP_JSON)
                except McpConfigError as error:
                    problems.append(str(error))
        except (ValueError, UnicodeDecodeError, OSError, RecursionError, MemoryError) as error:  # OSError: LinkRefused
            problems.append(f"{MCP_JSON}: {error}" if not isinstance(error, McpConfigError) else str(error))
    try:
        table = _mcp_table(project).get("servers", {})
        if not isinstance(table, dict):
            raise McpConfigError("config.toml: [mcp.servers] must be a table of [mcp.servers.NAME] tables")
        for name, raw in table.items():
            try:
                servers[name] = _server(name, raw, f"config.toml [mcp.servers.{name}]")
            except McpConfigError as error:
                problems.append(str(error))
    except (McpConfigError, ValueError) as error:
        problems.append(str(error))
    return list(servers.values()), problems


MCP_CONFIG_FLAG = "--mcp-config"


def parse_mcp_config(value: str) -> tuple[list[ServerConfig], list[str]]:
    """Claude Code's `--mcp-config`: a JSON string or a file holding {"mcpServers": {name: {command, args, env}}}.
    Raises McpConfigError when it is neither; a server that cannot be used is a problem (skipped)."""
    text = value
    if not value.lstrip().startswith("{"):
        try:
            with open(value, encoding="utf-8") as handle:
                text = handle.read()
        except OSError as error:
            raise McpConfigError(f"{MCP_CONFIG_FLAG} {value}: {error.strerror or error}") from None
    try:
        data = json.loads(text)
    except ValueError as error:
        raise McpConfigError(f"{MCP_CONFIG_FLAG}: not JSON: {error}") from None
    table = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(table, dict):
        raise McpConfigError(f"{MCP_CONFIG_FLAG}: expected {{\"mcpServers\": {{name: {{command, args, env}}}}}}")
    servers: list[ServerConfig] = []
    problems: list[str] = []
    for name, raw in table.items():
        try:
            servers.append(_server(name, raw, MCP_CONFIG_FLAG))
        except McpConfigError as error:
            problems.append(str(error))
    return servers, problems
