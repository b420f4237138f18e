"""The session's MCP servers in the UI: catalog-pane rows (kind `mcp`) and the header's summary."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tui_agent.core.versioning.store_interface import first_line
from tui_agent.ui.catalog_rows import CatalogRow

if TYPE_CHECKING:
    from tui_agent.core.mcp.hub import McpHub
    from tui_agent.core.project import Project

MCP_ACCESS = "mcp"


def mcp_rows(hub: McpHub | None) -> list[CatalogRow]:
    """One row per server (`mcp__<server>`: status, tool count or error) and one per tool it offers, with call counts."""
    if hub is None:
        return []
    rows: list[CatalogRow] = []
    for server in hub.rows():
        summary = f"MCP server: {len(server.tools)} tools" if server.status == "running" else (server.error or server.status)
        rows.append(CatalogRow(name=f"mcp__{server.name}", kind="mcp", status=server.status, calls=server.calls,
                               last_used=None, summary=summary, error=server.error or ""))
        rows.extend(CatalogRow(name=tool.name, kind="mcp", status="ok" if tool.calls else "unused", calls=tool.calls,
                               last_used=None, summary=first_line(tool.description) or f"{server.name}/{tool.tool}")
                    for tool in server.tools)
    return rows


def held_mcp_rows(project: Project) -> list[CatalogRow]:
    """A restricted project's configured servers, none started: one `untrusted` row each, naming the command it
    would run (its text made visible: it is the repository's, not the person's)."""
    from tui_agent.core.agent.command_view import one_line
    from tui_agent.core.mcp.config import McpConfigError, load_server_configs

    try:
        configs, _problems = load_server_configs(project)
    except (McpConfigError, OSError, ValueError):
        return []
    why = "not started: the project is not trusted (tuiagent trust, or /trust)"
    return [CatalogRow(name=f"mcp__{config.name}", kind="mcp", status="untrusted", calls=0, last_used=None,
                       summary=f"held MCP server: {one_line(config.launch, 120)} "
                               f"({config.source})", error=why)
            for config in configs]


def mcp_header(hub: McpHub | None) -> tuple[str, bool]:
    """('2/3 up', True when one failed or died), or ('', False) without configured servers."""
    if hub is None or not hub.connections:
        return "", False
    rows = hub.rows()
    up = sum(1 for row in rows if row.status == "running")
    down = [row.name for row in rows if row.status in ("failed", "exited", "untrusted")]
    text = f"{up}/{len(rows)} up" + (f" ({', '.join(down)} down)" if down else "")
    return text, bool(down or hub.problems)
