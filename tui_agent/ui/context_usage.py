"""How full the model's context is (the header's `ctx N%`) and `/compact`, which shortens old tool results now."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from tui_agent.core.events import Usage

if TYPE_CHECKING:
    from tui_agent.core.agent.loop import Agent


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
