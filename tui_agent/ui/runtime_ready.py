"""What the UI does once the project's runtime is open: the header's facts, the catalog's feed, the notices, a resumed session."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tui_agent.ui.context_usage import resumed_figures, usage_figures
from tui_agent.core.runtime_state import agent_of, mcp_of, recipes_of

if TYPE_CHECKING:
    from tui_agent.core.runtime import Runtime
    from tui_agent.ui.catalog_sync import CatalogSync
    from tui_agent.ui.host import UIHost
    from tui_agent.ui.turn import TurnRunner


async def show_runtime(host: UIHost, runtime: Runtime, *, turns: TurnRunner, catalog_sync: CatalogSync) -> None:
    """Bind the UI to `runtime` (just opened, or reopened by /trust)."""

    async def ask_elicitation(server: str, message: str, schema: dict[str, Any]) -> dict[str, Any] | None:
        """An MCP server's request for input (elicitation) as a form; None: the person declined."""
        from tui_agent.ui.screens.elicitation import ElicitationScreen

        return await host.ask(ElicitationScreen(server, message, schema))

    if (hub := mcp_of(runtime)) is not None and hub.connections:  # a server asking for input gets a form (headless
        hub.set_elicitation(ask_elicitation)  # runs decline); without one the MCP types are not imported
        from tui_agent.core.mcp.sampling import offer_sampling  # sampling: the model, after the approval modal

        if (agent := agent_of(runtime)) is not None:
            offer_sampling(agent, hub)
    host.model = host.model_name()
    host.sandbox_tier = runtime.core.sandbox.tier if runtime.core.sandbox is not None else "none"
    host.permission_mode = runtime.core.permissions.mode
    catalog_sync.refresh_branch()
    catalog_sync.start(runtime)
    for problem in runtime.core.problems:
        await host.add_notice(problem, "error")
    for warning in runtime.core.settings.warnings:
        await host.add_notice(warning, "warning")
    last_usage = None
    if runtime.core.resumed and runtime.core.session is not None:
        last_usage = await turns.show_session(runtime.core.session.path, runtime.core.session.id)
    if (agent := agent_of(runtime)) is None:
        await host.add_notice(host.no_model_message(), "warning")
    else:
        host.call_later(turns.send_queued)  # prompts typed while the project opened
        host.usage = resumed_figures(agent, last_usage) if runtime.core.resumed else usage_figures(agent.usage)
    if (recipes := recipes_of(runtime)) is not None:
        host.run_worker(recipes.session_started(), group="recipes-start")
