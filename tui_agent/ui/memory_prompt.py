"""`# a line` typed in the prompt box: added to the project's instructions file, said in the conversation, no turn."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from tui_agent.core.agent.memory_line import add_instruction, instruction_note
from tui_agent.core.agent.paths import PathRefused
from tui_agent.core.runtime_state import agent_of

if TYPE_CHECKING:
    from tui_agent.ui.host import UIHost
    from tui_agent.ui.turn import TurnRunner


async def remember_line(host: UIHost, turns: TurnRunner, line: str) -> None:
    """Append `line` to AGENTS.md (or CLAUDE.md); a running turn finishes first (its messages are in use)."""
    if turns.running:
        turns.queue.push(f"# {line}", "command")
        return
    try:
        name = await asyncio.to_thread(add_instruction, host.project_root, line)
    except (OSError, PathRefused) as error:
        await host.add_notice(f"Could not add the line to the project's instructions: {error}", "error")
        return
    agent = agent_of(host.state)
    if agent is not None:
        agent.instructions_changed(instruction_note(name, line))
    await host.add_notice(f"Added to {name}: - {line}")
