"""The core's turn events as ACP `session/update`s: message and thought chunks, tool calls and their updates."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Union

from acp import (plan_entry, text_block, tool_content, update_agent_message_text, update_agent_thought_text,
                 update_plan)
from acp.schema import (AgentMessageChunk, AgentPlanUpdate, AgentThoughtChunk, ContentToolCallContent,
                        CurrentModeUpdate, FileEditToolCallContent, StopReason, TerminalToolCallContent,
                        ToolCallProgress, ToolCallStart, UserMessageChunk)

from tui_agent.acp.toolcalls import (KINDS, CallView, clipped, diff, locations, proposed_text, read_text, title,
                                     view_of)
from tui_agent.core.events import (Event, Notice, PermissionModeChanged, PlanUpdated, TextDelta, ThinkingDelta,
                                   ToolCallFinished, ToolCallStarted, ToolOutputDelta, TurnFailed, TurnFinished)

ToolContent = Union[ContentToolCallContent, FileEditToolCallContent, TerminalToolCallContent]
Update = Union[UserMessageChunk, AgentMessageChunk, AgentThoughtChunk, ToolCallStart, ToolCallProgress, AgentPlanUpdate,
               CurrentModeUpdate]
STOP_REASONS: dict[str, StopReason] = {"max_tokens": "max_tokens", "model_context_window_exceeded": "max_tokens",
                                       "refusal": "refusal", "max_turns": "max_turn_requests"}
"""The core's stop or failure kinds that ACP names; every other end of a turn is end_turn, or an error."""


class EventMapper:
    """Follows one turn's events; `updates(event)` gives what the client is told, `stop` how the turn ended."""

    def __init__(self, root: Path, *, replay: bool = False) -> None:
        self.root = root
        self.replay = replay
        """Replaying a recorded session (session/load): no file is read for a diff, the files have moved on."""
        self.calls: dict[str, CallView] = {}
        self.running: CallView | None = None
        """The call being run (calls run one after another): the one an approval is about."""
        self.stop: StopReason | None = None
        self.failure: str | None = None

    def updates(self, event: Event) -> list[Update]:
        if isinstance(event, TextDelta):
            return [update_agent_message_text(event.text)] if event.text else []
        if isinstance(event, ThinkingDelta):
            return [update_agent_thought_text(event.text)] if event.text else []
        if isinstance(event, ToolCallStarted):
            return [self._started(event)]
        if isinstance(event, ToolOutputDelta):
            return self._output(event)
        if isinstance(event, ToolCallFinished):
            return [self._finished(event)]
        if isinstance(event, PlanUpdated):
            return [update_plan(plan_entry(entry.content, priority=entry.priority, status=entry.status)
                                for entry in event.entries)]
        if isinstance(event, PermissionModeChanged) and not self.replay:
            return [CurrentModeUpdate(session_update="current_mode_update", current_mode_id=event.mode)]
        if isinstance(event, Notice) and event.level != "info":
            return [update_agent_thought_text(f"[{event.level}] {event.message}\n")]
        if isinstance(event, TurnFinished):
            self.stop = STOP_REASONS.get(event.stop_reason, "end_turn")
        elif isinstance(event, TurnFailed):
            return self._failed(event)
        return []

    def _started(self, event: ToolCallStarted) -> ToolCallStart:
        view = self.calls[event.call_id] = view_of(self.root, event.call_id, event.name, event.arguments,
                                                   read=not self.replay)
        self.running = view
        return ToolCallStart(session_update="tool_call", tool_call_id=event.call_id, title=title(view, self.root),
                             kind=KINDS.get(event.name, "other"), status="in_progress", locations=locations(view),
                             content=self.proposal(view), raw_input=event.arguments)

    def proposal(self, view: CallView) -> list[ToolContent] | None:
        """What the call is about to do: an edit's diff, or the command it runs."""
        edit = diff(view, proposed_text(view)) if not self.replay else None
        if edit is not None:
            return list(edit)
        for key in ("command", "code"):
            value = view.arguments.get(key)
            if isinstance(value, str):
                return [tool_content(text_block(clipped(value)))]
        return None

    def _output(self, event: ToolOutputDelta) -> list[Update]:
        view = self.calls.get(event.call_id)
        if view is None:
            return []
        view.output.append(event.text)
        return [ToolCallProgress(session_update="tool_call_update", tool_call_id=event.call_id,
                                 content=[tool_content(text_block(clipped("".join(view.output))))])]

    def _finished(self, event: ToolCallFinished) -> ToolCallProgress:
        view = self.calls.get(event.call_id) or view_of(self.root, event.call_id, event.name, {})
        self.running = None
        content: list[Any] = []
        if not event.is_error and not self.replay and KINDS.get(event.name) in ("edit", "delete"):
            content += diff(view, read_text(view.path) if view.path is None or view.path.exists() else "") or []
        content.append(tool_content(text_block(clipped(event.result))))
        return ToolCallProgress(session_update="tool_call_update", tool_call_id=event.call_id,
                                status="failed" if event.is_error else "completed", content=content,
                                locations=locations(view), raw_output={"result": clipped(event.result),
                                                                       "is_error": event.is_error})

    def _failed(self, event: TurnFailed) -> list[Update]:
        """A stop ACP names ends the turn with that reason (the message told as text); any other is an error."""
        stop = STOP_REASONS.get(event.kind, "end_turn" if event.kind == "repeated_failure" else None)
        if stop is None:
            self.failure = event.message
            return []
        self.stop = stop
        return [update_agent_message_text(f"\n[{event.kind}] {event.message}\n")]
