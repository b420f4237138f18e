"""`!command` typed in the prompt: the person's own command runs as typed, like their terminal (their shell and
rights, no sandbox, no approval), shows as a tool block (its events posted to the conversation as a turn's are), and
the model is told what ran and what it printed."""

from __future__ import annotations

import time
import uuid
from typing import TYPE_CHECKING

from textual.worker import WorkerCancelled

from tui_agent.core.events import Event, ToolCallFinished, ToolCallStarted, ToolOutputDelta
from tui_agent.core.runtime_state import agent_of

if TYPE_CHECKING:
    from tui_agent.ui.host import UIHost
    from tui_agent.ui.turn import TurnRunner

STOPPED = "cancelled: you stopped the command"
NOTE_CHARS = 4000
"""How much of the output the model is told (the block shows all of it)."""


def bang_command(text: str) -> str | None:
    """The command of a `!command` prompt (None for anything else; `!` alone is not one)."""
    stripped = text.strip()
    if not stripped.startswith("!") or stripped.startswith("!!"):
        return None
    return stripped[1:].strip() or None


async def run_bang(app: UIHost, turns: TurnRunner, command: str) -> None:
    """Run the person's `command` on the host in the project folder (core/agent/own_command)."""
    from tui_agent.core.agent.own_command import run_own_command

    if turns.running:
        turns.queue.push(f"!{command}", "command")  # one thing at a time: after the turn
        return
    runtime = app.runtime
    if runtime is None:
        await app.add_notice("The project is still opening: try again in a moment.", "warning")
        return
    call_id = f"bang-{uuid.uuid4().hex[:12]}"
    events = turns.events  # shown as a turn's run_shell calls are: core events posted to the conversation, in order
    await events.show(ToolCallStarted(call_id=call_id, name="run_shell", arguments={"command": command}))

    def show_live(event: Event) -> None:  # the output as it comes (the call's end is posted behind it)
        if isinstance(event, ToolOutputDelta):
            events.show_later(event)

    started = time.monotonic()
    cancelled = False
    try:
        output = await turns.run_stoppable(run_own_command(runtime.core.project.root, command, call_id, show_live))
        result, is_error = output.text, output.is_error
    except WorkerCancelled:
        result, is_error, cancelled = STOPPED, True, True
    except OSError as error:  # the shell could not start (the project folder gone)
        result, is_error = f"could not run it: {error}", True
    await events.show(ToolCallFinished(call_id=call_id, name="run_shell", result=result, is_error=is_error,
                                       duration_ms=(time.monotonic() - started) * 1000))
    conversation = turns.view()
    entry = conversation.tool_entry(call_id)
    if entry is not None:
        entry.cancelled = cancelled
        conversation.show_result(entry)
    agent = agent_of(runtime)
    if agent is not None:
        shown = result if len(result) <= NOTE_CHARS else result[:NOTE_CHARS] + "\n[…cut]"
        agent.add_note(f"The user ran a shell command themselves (`!{command}`):\n{shown}")
