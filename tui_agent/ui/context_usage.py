"""How full the model's context is (the header's `ctx N%`) and `/compact`, which replaces the conversation by a summary."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from textual.worker import WorkerCancelled, WorkerFailed

from tui_agent.core.events import Usage

if TYPE_CHECKING:
    from tui_agent.core.agent.loop import Agent
    from tui_agent.ui.app import TuiAgentApp


def context_percent_of(event: Usage, limit_tokens: int) -> int:
    """The last request's prompt (uncached, cache writes and reads: all of it was in the context) as a share of the limit."""
    used = event.input_tokens + event.cache_read_tokens + event.cache_write_tokens
    return min(100, round(100 * used / limit_tokens)) if limit_tokens > 0 else 0


def estimated_percent(agent: Agent) -> int:
    """The conversation's messages as a share of the context limit, estimated from their size (no request made)."""
    from tui_agent.core.agent.prompt import estimate_tokens

    used = estimate_tokens(json.dumps(agent.messages))
    return min(100, round(100 * used / agent.context_limit_tokens)) if agent.context_limit_tokens > 0 else 0


async def run_compact(app: TuiAgentApp, focus: str) -> None:
    """`/compact [focus]`: the model summarizes the conversation, which the summary then replaces (core/agent/compact).
    Runs as the agent's turn would (busy header, Esc cancels it); a failure or a cancel leaves the conversation as it was."""
    from tui_agent.core.agent.compact import CompactError, compact_agent
    from tui_agent.core.runtime_state import agent_of
    from tui_agent.ui.turn import AGENT_GROUP

    turns = app.turns
    if turns.running:
        turns.queue.push(f"/compact {focus}".strip(), "command")  # the turn's messages are in use: runs when it is over
        return
    agent = agent_of(app.state)
    if agent is None:
        await app.add_notice(app.no_model_message(), "warning")
        return
    if not agent.messages:
        await app.add_notice("Nothing to compact: the conversation is empty.")
        return
    before = estimated_percent(agent)
    turns.running = True
    app.header.busy = True
    app.refresh_bindings()
    worker = app.run_worker(compact_agent(agent, focus), group=AGENT_GROUP, exclusive=True, exit_on_error=False)
    await app.add_notice("Compacting: the model is summarizing the conversation (esc cancels)…")
    try:
        await worker.wait()
    except WorkerCancelled:
        await app.add_notice("Compaction cancelled: the conversation is unchanged.", "warning")
        return
    except WorkerFailed as failed:
        error = failed.error
        reason = str(error) if isinstance(error, CompactError) else f"{type(error).__name__}: {error}"
        await app.add_notice(f"Could not compact: {reason}. The conversation is unchanged.", "error")
        return
    finally:
        turns.end()
        app.call_later(turns.send_queued)
    summary = worker.result
    assert summary is not None
    for notice in summary.notices:  # retries, or old tool results shortened to fit the summary request
        await app.add_notice(notice.message, notice.level)
    usage = agent.usage
    app.header.input_tokens, app.header.output_tokens, app.header.cost_usd = usage.input_tokens, usage.output_tokens, usage.cost_usd
    after = estimated_percent(agent)
    app.header.context_percent = after
    await app.add_notice(f"Compacted: about {before}% → {after}% of the context. The model continues from its summary "
                         f"(the next prompt joins it):\n\n{summary.text}")
