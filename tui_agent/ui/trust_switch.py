"""/trust in a running session: the trust screen again and, on Trust, the runtime reopened trusted (its catalog,
recipes and MCP servers start) without restarting the app; the conversation goes on in the same session."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import TYPE_CHECKING, Protocol

from tui_agent.core.runtime_state import Opening, Restricted, agent_of
from tui_agent.ui.host import UIHost
from tui_agent.ui.screens.trust import TrustScreen

if TYPE_CHECKING:
    from tui_agent.core.runtime_state import Runtime
    from tui_agent.ui.runtime_bridge import LaunchOptions
    from tui_agent.ui.turn import TurnRunner


class TrustHost(UIHost, Protocol):
    """The app, which can close its runtime and open the project again."""

    async def reopen_runtime(self, options: LaunchOptions, *, clear_conversation: bool) -> Runtime | None: ...


async def slash_trust(app: TrustHost, turns: TurnRunner, args: str) -> None:
    """Show what the project grants now; Trust records it and reopens the project trusted."""
    from tui_agent.core import trust

    state = app.state
    if isinstance(state, Opening):
        await app.add_notice("/trust: the project is still opening (its trust screen comes first).", "warning")
        return
    if turns.running:
        turns.queue.push("/trust", "command")  # runs when the turn is over
        return
    project = state.core.project
    status = await asyncio.to_thread(trust.check, project)
    if status.trusted and not isinstance(state, Restricted):
        await app.add_notice(f"/trust: this project is trusted ({status.state}); there is nothing new to approve. "
                             "`tuiagent untrust` takes it back.")
        return
    if not status.trusted:
        description = await asyncio.to_thread(trust.describe, project)
        if not await app.ask(TrustScreen(description, status)):
            await app.add_notice("Still restricted: the project's grants, recipes, tools and MCP servers stay off."
                                 if isinstance(state, Restricted) else
                                 "Not approved: this session keeps the grants you approved before; the changes are "
                                 "asked again when the project next opens.")
            return
        await asyncio.to_thread(trust.grant, project)
    await reopen(app, state)


async def reopen(app: TrustHost, old: Runtime) -> None:
    """Open the project again (trusted now), keeping the conversation: the same session is resumed when it has
    messages (the conversation pane is rebuilt from it)."""
    agent = agent_of(old)
    session = old.core.session
    keep = agent is not None and bool(agent.messages) and session is not None
    options = dataclasses.replace(app.options, resume=session.id if keep and session is not None else None,
                                  continue_latest=False, model=agent.model if agent is not None else app.options.model)
    runtime = await app.reopen_runtime(options, clear_conversation=keep)
    if runtime is not None:
        what = "its tools, recipes and MCP servers are on" if not isinstance(runtime, Restricted) else "it is still restricted"
        await app.add_notice(f"Trusted: the project reopened, {what}.")
