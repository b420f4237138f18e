"""Headless output of a turn: plain text (assistant text and a line per tool call), one JSON object, or JSON lines."""

from __future__ import annotations

import json
import re
from dataclasses import asdict
from typing import Any, TextIO

from tui_agent.core.events import (
    ApprovalDenied, Event, Notice, TextDelta, ToolAuthored, ToolCallFinished, ToolCallStarted, TurnFailed, TurnFinished,
)

OUTPUT_FORMATS = ("text", "json", "stream-json")


def event_type(event: Event) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", type(event).__name__).lower()


def event_json(event: Event) -> dict[str, Any]:
    return {"type": event_type(event), **asdict(event)}


def _short_args(arguments: dict[str, Any], limit: int = 120) -> str:
    text = json.dumps(arguments, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


class HeadlessPrinter:
    """Writes a turn's events in one of OUTPUT_FORMATS and builds the final result object."""

    def __init__(self, output_format: str, stdout: TextIO, stderr: TextIO) -> None:
        if output_format not in OUTPUT_FORMATS:
            raise ValueError(f"--output-format must be one of {', '.join(OUTPUT_FORMATS)}")
        self.format = output_format
        self.out = stdout
        self.err = stderr
        self.tool_calls: list[dict[str, Any]] = []
        self.final_text = ""
        self.error: TurnFailed | None = None
        self.finished = False
        self._at_line_start = True

    def handle(self, event: Event) -> None:
        self._remember(event)
        if self.format == "stream-json":
            self.out.write(json.dumps(event_json(event), ensure_ascii=False, default=str) + "\n")
            self.out.flush()
        elif self.format == "text":
            self._print_text(event)

    def _remember(self, event: Event) -> None:
        if isinstance(event, ToolCallStarted):
            self.tool_calls.append({"id": event.call_id, "name": event.name, "input": event.arguments})
        elif isinstance(event, ToolCallFinished):
            for call in self.tool_calls:
                if call["id"] == event.call_id:
                    call.update(is_error=event.is_error, duration_ms=round(event.duration_ms, 1))
        elif isinstance(event, TurnFinished):
            self.final_text, self.finished = event.text, True
        elif isinstance(event, TurnFailed):
            self.error = event

    def _line(self, text: str, stream: TextIO | None = None) -> None:
        target = stream or self.out
        if not self._at_line_start:
            self.out.write("\n")
            self._at_line_start = True
        target.write(text + "\n")
        target.flush()

    def _print_text(self, event: Event) -> None:
        if isinstance(event, TextDelta):
            self.out.write(event.text)
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

    def finish(self, *, session_id: str, model: str, usage: dict[str, Any], turn_usage: dict[str, Any] | None = None,
               edited_files: list[str] | None = None) -> int:
        """Print the final JSON object (json and stream-json) and return the exit code. `edited_files`: the project
        files (outside `.agent/`) the turn changed, None outside a git work tree."""
        ok = self.finished and self.error is None
        if self.format == "text" and edited_files:
            self._line(f"[edited] {len(edited_files)} project file(s): {', '.join(edited_files)}", self.err)
        if self.format in ("json", "stream-json"):
            result = {
                "type": "result",
                "is_error": not ok,
                "result": self.final_text,
                "error": self.error.message if self.error else None,
                "error_kind": self.error.kind if self.error else None,
                "session_id": session_id,
                "model": model,
                "usage": usage,
                "turn_usage": turn_usage if turn_usage is not None else usage,
                "tool_calls": self.tool_calls,
                "edited_files": edited_files,
            }
            self.out.write(json.dumps(result, ensure_ascii=False, default=str) + "\n")
            self.out.flush()
        return 0 if ok else 1


__all__ = ["HeadlessPrinter", "OUTPUT_FORMATS", "event_json"]
