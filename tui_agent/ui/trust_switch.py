"""/trust in a running session: the trust screen again and, on Trust, the runtime reopened trusted (its catalog,
recipes and MCP servers start) without restarting the app; the conversation goes on in the same session."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import TYPE_CHECKING

from tui_agent.core.runtime_state import Opening, Restricted, agent_of
from tui_agent.ui.runtime_bridge import UICallbacks
from tui_agent.ui.screens.trust import TrustScreen

if TYPE_CHECKING:
    from tui_agent.core.runtime_state import Runtime
    from tui_agent.ui.app import TuiAgentApp


async def slash_trust(app: TuiAgentApp, args: str) -> None:
    """Show what the project grants now; Trust records it and reopens the project trusted."""
    from tui_agent.core import trust

    state = app.state
    if isinstance(state, Opening):
        await app.add_notice("/trust: the project is still opening (its trust screen comes first).", "warning")
        return
    if app.turns.running:
        app.turns.queue.push("/trust", "command")  # runs when the turn is over
        return
    project = state.project
    status = await asyncio.to_thread(trust.check, project)
    if status.trusted and not isinstance(state, Restricted):
        await app.add_notice(f"/trust: this project is trusted ({status.state}); there is nothing new to approve. "
                             "`tuiagent untrust` takes it back.")
        return
    if not status.trusted:
        description = await asyncio.to_thread(trust.describe, project)
        if not await app.push_screen_wait(TrustScreen(description, status)):
            await app.add_notice("Still restricted: the project's grants, recipes, tools and MCP servers stay off."
                                 if isinstance(state, Restricted) else
                                 "Not approved: this session keeps the grants you approved before; the changes are "
                                 "asked again when the project next opens.")
            return
        await asyncio.to_thread(trust.grant, project)
    await reopen(app, state)


async def reopen(app: TuiAgentApp, old: Runtime) -> None:
    """Close `old` and open the project again (trusted now), keeping the conversation: the same session is resumed
    when it has messages (the conversation pane is rebuilt from it)."""
    agent = agent_of(old)
    session = old.session
    keep = agent is not None and bool(agent.messages) and session is not None
    options = dataclasses.replace(app.options, resume=session.id if keep and session is not None else None,
                                  continue_latest=False, model=agent.model if agent is not None else app.options.model)
    app.runtime = None  # the UI sees Opening while the parts restart
    app.runtime_error = None
    app.catalog_sync.runtime = None  # no refresh reads the closed stores
    app.ready.clear()
    app.loading = "the project"
    await old.aclose()
    callbacks = UICallbacks(approve=app.turns.approve, ask_init_git=app.ask_init_git,
                            submit_prompt=app.turns.submit_prompt, progress=app.show_loading)
    try:
        runtime = await app.runtime_opener(app.project_root, callbacks, options)
    except Exception as exc:  # the UI stays up and says what went wrong
        app.runtime_error = f"{type(exc).__name__}: {exc}"
        app.loading = ""
        app.ready.set()
        await app.add_notice(f"Could not reopen the project: {app.runtime_error}", "error")
        return
    if keep:
        await app.conversation.clear()  # runtime_ready shows the resumed session again, from its file
    app.runtime = runtime
    app.loading = ""
    await app.runtime_ready(runtime)
    app.ready.set()
    what = "its tools, recipes and MCP servers are on" if not isinstance(runtime, Restricted) else "it is still restricted"
    await app.add_notice(f"Trusted: the project reopened, {what}.")
