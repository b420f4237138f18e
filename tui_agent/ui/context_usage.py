"""The header's usage figures (tokens, cost, how full the context is: one formula) and `/compact`, which replaces the conversation by a summary."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.worker import WorkerCancelled

from tui_agent.core.errors import PROJECT_FAILURES
from tui_agent.core.events import Usage

if TYPE_CHECKING:
    from tui_agent.core.agent.loop import Agent
    from tui_agent.core.agent.pricing import UsageTotals
    from tui_agent.ui.host import UIHost
    from tui_agent.ui.turn import TurnRunner


@dataclass(frozen=True)
class UsageFigures:
    """What the header shows of the session's use: tokens in and out, cost, context percent (-1: no request yet)."""

    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    context_percent: int = -1


def usage_figures(totals: UsageTotals, context_percent: int = -1) -> UsageFigures:
    """The session's figures from its totals: tokens in are `prompt_tokens` (uncached, cache writes and reads alike;
    the cost prices each at its rate)."""
    return UsageFigures(totals.prompt_tokens, totals.output_tokens, totals.cost_usd, context_percent)


def session_totals(event: Usage) -> UsageTotals:
    """The session totals a Usage event carries, as the agent keeps them."""
    from tui_agent.core.agent.pricing import UsageTotals

    return UsageTotals(event.session_input_tokens, event.session_output_tokens, event.session_cache_read_tokens,
                       event.session_cache_write_tokens, event.session_cost_usd)


def context_percent_of(event: Usage, limit_tokens: int) -> int:
    """The last request's prompt (uncached, cache writes and reads: all of it was in the context) as a share of the limit."""
    used = event.input_tokens + event.cache_read_tokens + event.cache_write_tokens
    return min(100, round(100 * used / limit_tokens)) if limit_tokens > 0 else 0


def estimated_percent(agent: Agent) -> int:
    """The conversation's messages as a share of the context limit, estimated from their size (no request made)."""
    from tui_agent.core.agent.system_prompt import estimate_tokens

    used = estimate_tokens(json.dumps(agent.messages))
    return min(100, round(100 * used / agent.context_limit_tokens)) if agent.context_limit_tokens > 0 else 0


def resumed_figures(agent: Agent, last: Usage | None) -> UsageFigures:
    """The header after a resume: the session's totals, and the context as its last request filled it (the system
    prompt and tools included), estimated from the messages only when the session recorded no request."""
    context = context_percent_of(last, agent.context_limit_tokens) if last is not None else estimated_percent(agent)
    return usage_figures(agent.usage, context)


async def run_compact(host: UIHost, turns: TurnRunner, focus: str) -> None:
    """`/compact [focus]`: the model summarizes the conversation, which the summary then replaces (core/agent/conversation_summary).
    Runs as the agent's turn would (busy header, Esc cancels it); a failure or a cancel leaves the conversation as it was."""
    from tui_agent.core.agent.conversation_summary import CompactError, Summary, compact_agent
    from tui_agent.core.runtime_state import agent_of

    if turns.running:
        turns.queue.push(f"/compact {focus}".strip(), "command")  # the turn's messages are in use: runs when it is over
        return
    agent = agent_of(host.state)
    if agent is None:  # (the registry's availability check said why)
        return
    if not agent.messages:
        await host.add_notice("Nothing to compact: the conversation is empty.")
        return
    before = estimated_percent(agent)

    async def compacting() -> Summary:  # in the turn's place from the start: a prompt sent meanwhile queues
        await host.add_notice("Compacting: the model is summarizing the conversation (esc cancels)…")
        return await compact_agent(agent, focus)

    try:
        summary = await turns.run_stoppable(compacting())
    except WorkerCancelled:
        await host.add_notice("Compaction cancelled: the conversation is unchanged.", "warning")
        return
    except PROJECT_FAILURES as error:  # CompactError (a ModelError among them), the session file's
        reason = str(error) if isinstance(error, CompactError) else f"{type(error).__name__}: {error}"
        await host.add_notice(f"Could not compact: {reason}. The conversation is unchanged.", "error")
        return
    for notice in summary.notices:  # retries, or old tool results shortened to fit the summary request
        await host.add_notice(notice.message, notice.level)
    after = estimated_percent(agent)
    host.usage = usage_figures(agent.usage, after)
    await host.add_notice(f"Compacted: about {before}% → {after}% of the context. The model continues from its summary "
                         f"(the next prompt joins it):\n\n{summary.text}")
