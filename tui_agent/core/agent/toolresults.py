"""What a tool call gives back: its tool_result block, a trimmed traceback, repeated-failure counting, sandbox and checkpoint notices."""

from __future__ import annotations

import json
import traceback
from typing import TYPE_CHECKING, Any, Literal

from tui_agent.core.content import ToolResultBlock, ToolUseBlock, text_block

from tui_agent.core.agent.toolbase import ToolOutput, truncate
from tui_agent.core.events import Notice
from tui_agent.core.sandbox import REFUSED
from tui_agent.core.textsafety import printable

if TYPE_CHECKING:
    from tui_agent.core.protocols import AgentSandbox, TurnRecorder

REPEATED_FAILURE_LIMIT = 3
MAX_TRACEBACK_LINES = 12
MAX_SANDBOX_NOTES = 24
"""Sandbox notes told of one call one by one, then one count: the sandbox caps each of its steps' notes (11 lines),
a run has two such steps, a call running in parallel with others may see theirs too."""


def count_failure(failures: dict[str, int], call: ToolUseBlock, output: ToolOutput) -> str:
    """Count a failed call by name and input; the reason to stop once the same call failed too often, else ""."""
    if not output.is_error:
        return ""
    key = call["name"] + json.dumps(call.get("input"), sort_keys=True, default=str)
    failures[key] = failures.get(key, 0) + 1
    if failures[key] < REPEATED_FAILURE_LIMIT:
        return ""
    return f"stopped: {call['name']} failed {REPEATED_FAILURE_LIMIT} times with the same input; last error: {output.text[:300]}"


def result_block(call_id: str, output: ToolOutput) -> ToolResultBlock:
    text = output.text if output.text.strip() else "(empty)"
    block: ToolResultBlock = {"type": "tool_result", "tool_use_id": call_id, "content": text}
    if output.blocks:
        block["content"] = [text_block(text), *output.blocks]
    if output.is_error:
        block["is_error"] = True
    return block


def trimmed_traceback(error: BaseException) -> str:
    lines = traceback.format_exception(error)
    text = "".join(lines[-MAX_TRACEBACK_LINES:]) if len(lines) > MAX_TRACEBACK_LINES else "".join(lines)
    text, _ = truncate(text, 4000)
    return f"internal error in the tool: {type(error).__name__}: {error}\n{text}"


def sandbox_failure(name: str, error: Exception, events: list[Any]) -> ToolOutput:
    """The result of a call whose sandbox could not start (told to the model, and to the person as a notice)."""
    events.append(Notice(f"{name} could not run: sandbox: {error}", level="error"))
    return ToolOutput(f"sandbox: {error}", is_error=True)


def told_of_quarantine(output: ToolOutput, sandbox: AgentSandbox | None, seen: int, events: list[Any]) -> ToolOutput:
    """The call's output with a line per protected path its code created and the sandbox moved to
    `.agent/quarantine/`, or per write it refused (after the first `seen` notes), each also a notice for the person;
    past `MAX_SANDBOX_NOTES` one line counts the rest. A call with a refused write is an error, whatever its own exit
    status."""
    notes = sandbox.notices[seen:] if sandbox is not None else []
    if not notes:
        return output
    shown = [printable(note) for note in notes[:MAX_SANDBOX_NOTES]]  # one line each, whatever a file name holds
    if len(notes) > MAX_SANDBOX_NOTES:
        shown.append(f"and {len(notes) - MAX_SANDBOX_NOTES} more notes of the sandbox about this call, not told one "
                     "by one")
    events.extend(Notice(note, level="warning") for note in shown)
    told = "".join(f"\n[tuiagent] {note}" for note in shown if note not in output.text)  # run_python shows stderr
    refused = any(REFUSED in note for note in notes)
    return ToolOutput(output.text + told, is_error=output.is_error or refused, truncated=output.truncated,
                      blocks=output.blocks)


def checkpoint_warnings(recorder: TurnRecorder | None) -> list[tuple[str, Literal["warning"]]]:
    """The recorder's failed checkpoints since the last call, as warnings (its list is emptied)."""
    problems = recorder.problems if recorder is not None else []
    found: list[tuple[str, Literal["warning"]]] = [(problem, "warning") for problem in problems]
    problems.clear()
    return found
