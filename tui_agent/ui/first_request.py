"""Start-up chores (the rendering warm-up, the catalog pane's first rows) wait while a prompt typed during the opening is on its way to the model."""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tui_agent.core.agent.loop import Agent
    from tui_agent.ui.turn import TurnRunner

WAIT_AT_MOST_S = 3.0
"""A server slow to answer (or unreachable) holds the chores back no longer than this."""
POLL_S = 0.1
"""How often the wait looks whether the turn is still on (it may fail before any answer)."""


async def after_first_request(turns: TurnRunner, agent: Agent | None) -> None:
    """Return once the prompt typed while the project opened has reached the model (its server answered), at once
    when none is queued or running: the chores would share the CPU, and the interpreter's lock, with sending it."""
    from tui_agent.core.agent.model import ModelClient

    if agent is None or not isinstance(agent.client, ModelClient):
        return
    deadline = asyncio.get_running_loop().time() + WAIT_AT_MOST_S
    while (turns.running or turns.queue) and not agent.client.answered.is_set():  # a failed turn ends the wait too
        left = deadline - asyncio.get_running_loop().time()
        if left <= 0:
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(agent.client.answered.wait(), min(left, POLL_S))
