"""The header's usage figures (tokens, cost, how full the context is: one formula) and `/compact`."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tui_agent.core.events import Usage

if TYPE_CHECKING:
    from tui_agent.core.agent.loop import Agent
    from tui_agent.core.agent.pricing import UsageTotals


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
    from tui_agent.core.agent.prompt import estimate_tokens

    used = estimate_tokens(json.dumps(agent.messages))
    return min(100, round(100 * used / agent.context_limit_tokens)) if agent.context_limit_tokens > 0 else 0


def compact(agent: Agent) -> tuple[int, int, int]:
    """Shorten every old tool result and long tool input, keeping the newest message whole (what the agent loop does
    by itself near the limit, now): (items shortened, estimated % before, estimated % after)."""
    before = estimated_percent(agent)
    total, level = 0, 0
    while True:
        count, level = agent.shorten_context(level)  # agent.messages is a copy derived from the conversation's turns
        total += count
        if not count:
            break
    return total, before, estimated_percent(agent)
