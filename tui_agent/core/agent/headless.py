"""Headless output of a turn: plain text, one JSON result object, or Claude Code's stream-json lines.

`json` prints one object shaped like Claude Code's `-p --output-format json` result (type, subtype, is_error,
duration_ms, num_turns, result, session_id, total_cost_usd, usage with the cache figures) plus tuiagent's
own fields (model, error, error_kind, tool_calls, session_usage). `stream-json` prints Claude Code's event
lines: a `system` `init` line, then `assistant` and `user` (tool results) messages as the conversation
grows, then the same `result` object.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import asdict, dataclass
from typing import Any, TextIO

from tui_agent.core.agent.pricing import UsageTotals, api_usage
from tui_agent.core.textsafety import for_terminal
from tui_agent.core.events import (
    ApprovalDenied, Event, Notice, TextDelta, ToolAuthored, ToolCallFinished, ToolCallStarted, TurnFailed, TurnFinished, Usage,
)

OUTPUT_FORMATS = ("text", "json", "stream-json")


def event_type(event: Event) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", type(event).__name__).lower()


def event_json(event: Event) -> dict[str, Any]:
    return {"type": event_type(event), **asdict(event)}


def _short_args(arguments: dict[str, Any], limit: int = 120) -> str:
    text = json.dumps(arguments, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True)
class RunInfo:
    """What the `system` `init` line tells: the session, where, with which model, tools and permission mode."""

    session_id: str
    model: str
    cwd: str
    tools: list[str]
    permission_mode: str


class HeadlessPrinter:
    """Writes a turn's events in one of OUTPUT_FORMATS and builds the final result object."""

    def __init__(self, output_format: str, stdout: TextIO, stderr: TextIO) -> None:
        if output_format not in OUTPUT_FORMATS:
            raise ValueError(f"--output-format must be one of {', '.join(OUTPUT_FORMATS)}")
        self.format = output_format
        self.out = stdout
        self.err = stderr
        self.tool_calls: list[dict[str, Any]] = []
        self.denials: list[dict[str, Any]] = []
        self.final_text = ""
        self.error: TurnFailed | None = None
        self.finished = False
        self._at_line_start = True
        self._started = time.monotonic()
        self._info: RunInfo | None = None
        self._messages: list[dict[str, Any]] = []
        self._emitted = 0
        self._last_usage: Usage | None = None

    def start(self, info: RunInfo, messages: list[dict[str, Any]]) -> None:
        """Begin the run: remember the conversation to follow (new messages only) and print the init line."""
        self._info, self._messages, self._emitted = info, messages, len(messages)
        self._started = time.monotonic()
        if self.format == "stream-json":
            self._emit({"type": "system", "subtype": "init", "session_id": info.session_id, "cwd": info.cwd, "model": info.model,
                        "tools": info.tools, "mcp_servers": [], "permissionMode": info.permission_mode})

    def handle(self, event: Event) -> None:
        self._remember(event)
        if self.format == "stream-json":
            self._emit_new_messages()
        elif self.format == "text":
            self._print_text(event)
        if self.format != "text" and isinstance(event, Notice) and event.level != "info":
            self.err.write(for_terminal(self.err, f"[{event.level}] {event.message}") + "\n")  # stdout stays JSON
            self.err.flush()

    def _emit(self, line: dict[str, Any]) -> None:
        self.out.write(json.dumps(line, ensure_ascii=False, default=str) + "\n")
        self.out.flush()

    def _emit_new_messages(self) -> None:
        """Print the messages added to the conversation since the last call: assistant replies and tool results."""
        self._emitted = min(self._emitted, len(self._messages))  # a failed prompt taken back
        session_id = self._info.session_id if self._info else ""
        for message in self._messages[self._emitted:]:
            content = message.get("content")
            if message.get("role") == "assistant" and isinstance(content, list):
                body: dict[str, Any] = {"type": "message", "role": "assistant", "model": self._info.model if self._info else "", "content": content}
                if self._last_usage is not None:
                    body["usage"] = api_usage(_usage_totals(self._last_usage))
                self._emit({"type": "assistant", "message": body, "parent_tool_use_id": None, "session_id": session_id})
            elif message.get("role") == "user" and isinstance(content, list):
                results = [block for block in content if block.get("type") == "tool_result"]
                if results:  # the prompt itself is not echoed, as in Claude Code
                    self._emit({"type": "user", "message": {"role": "user", "content": results}, "parent_tool_use_id": None, "session_id": session_id})
        self._emitted = len(self._messages)

    def _remember(self, event: Event) -> None:
        if isinstance(event, ToolCallStarted):
            self.tool_calls.append({"id": event.call_id, "name": event.name, "input": event.arguments})
        elif isinstance(event, ToolCallFinished):
            for call in self.tool_calls:
                if call["id"] == event.call_id:
                    call.update(is_error=event.is_error, duration_ms=round(event.duration_ms, 1))
        elif isinstance(event, ApprovalDenied):
            denied: dict[str, Any] | None = next((c for c in self.tool_calls if c["id"] == event.call_id), None)
            self.denials.append({"tool_name": event.name, "tool_use_id": event.call_id, "tool_input": denied["input"] if denied else {}})
        elif isinstance(event, Usage):
            self._last_usage = event
        elif isinstance(event, TurnFinished):
            self.final_text, self.finished = event.text, True
        elif isinstance(event, TurnFailed):
            self.error = event

    def _line(self, text: str, stream: TextIO | None = None) -> None:
        target = stream or self.out
        if not self._at_line_start:
            self.out.write("\n")
            self._at_line_start = True
        target.write(for_terminal(target, text) + "\n")
        target.flush()

    def _print_text(self, event: Event) -> None:
        if isinstance(event, TextDelta):
            self.out.write(for_terminal(self.out, event.text))
            self.out.flush()
            self._at_line_start = event.text.endswith("\n")
        elif isinstance(event, ToolCallStarted):
            self._line(f"[tool] {event.name} {_short_args(event.arguments)}")
        elif isinstance(event, ToolCallFinished) and event.is_error:
            first_line = event.result.strip().splitlines()[0] if event.result.strip() else ""
            self._line(f"[tool] {event.name} failed: {first_line[:200]}")
        elif isinstance(event, ToolAuthored):
            verb = "created" if event.created else "updated"
            self._line(f"[authored] {event.kind} {event.name} {verb}" + (f" (commit {event.commit[:10]})" if event.commit else " (not committed)"))
        elif isinstance(event, ApprovalDenied):
            self._line(f"[denied] {event.name}: {event.reason}", self.err)
        elif isinstance(event, Notice):
            self._line(f"[{event.level}] {event.message}", self.err)
        elif isinstance(event, TurnFailed):
            self._line(f"error: {event.message}", self.err)
        elif isinstance(event, TurnFinished) and not self._at_line_start:
            self.out.write("\n")
            self.out.flush()
            self._at_line_start = True

    def finish(self, *, session_id: str, model: str, run_usage: UsageTotals, session_usage: UsageTotals,
               edited_files: list[str] | None = None) -> int:
        """Print the final result object (json and stream-json) and return the exit code. `edited_files`: the project
        files (outside `.agent/`) the turn changed, None outside a git work tree."""
        ok = self.finished and self.error is None
        if self.format == "text" and edited_files:
            self._line(f"[edited] {len(edited_files)} project file(s): {', '.join(edited_files)}", self.err)
        if self.format == "stream-json":
            self._emit_new_messages()
        if self.format in ("json", "stream-json"):
            subtype = "success" if ok else ("error_max_turns" if self.error and self.error.kind == "max_turns" else "error_during_execution")
            self._emit({
                "type": "result", "subtype": subtype, "is_error": not ok,
                "duration_ms": round((time.monotonic() - self._started) * 1000),
                "num_turns": run_usage.requests, "result": self.final_text, "session_id": session_id,
                "total_cost_usd": round(run_usage.cost_usd, 6), "usage": api_usage(run_usage), "permission_denials": self.denials,
                "model": model, "error": self.error.message if self.error else None,
                "error_kind": self.error.kind if self.error else None, "tool_calls": self.tool_calls,
                "session_usage": session_usage.to_dict(), "edited_files": edited_files,
            })
        return 0 if ok else 1


def _usage_totals(event: Usage) -> UsageTotals:
    return UsageTotals(event.input_tokens, event.output_tokens, event.cache_read_tokens, event.cache_write_tokens, event.cost_usd, 1)


__all__ = ["HeadlessPrinter", "OUTPUT_FORMATS", "RunInfo", "event_json"]
