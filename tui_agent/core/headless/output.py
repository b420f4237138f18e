"""Headless output of a turn: plain text, one JSON result object, or Claude Code's stream-json lines.

`json` prints one object shaped like Claude Code's `-p --output-format json` result (type, subtype, uuid, is_error,
duration_ms, duration_api_ms, num_turns, result, stop_reason, session_id, total_cost_usd, usage with the cache
figures, modelUsage, permission_denials, terminal_reason) plus tuiagent's own fields (model, error, error_kind,
tool_calls, session_usage, edited_files, warnings). `stream-json` prints Claude Code's event lines: a `system`
`init` line, then `assistant` and `user` (tool results) messages as the conversation grows, then the same `result`;
with `partial` (--include-partial-messages) each raw API stream event too, as a `stream_event` line. An assistant
line's `message` is the API's message (its id, model and usage, see core/headless/api_replies).
The cost is null when the model is not one whose price is known (a non-Claude model behind a proxy).
"""

from __future__ import annotations

import json
import re
import time
import uuid
from dataclasses import asdict, dataclass, field
from collections.abc import Mapping, Sequence
from typing import Any, TextIO, TypedDict

from tui_agent.core.agent.plan_tools import checklist
from tui_agent.core.agent.pricing import UsageTotals, api_usage, price_for
from tui_agent.core.agent.turns import Turn, message_of
from tui_agent.core.headless.api_replies import USAGE_EVENTS, ReplyTracker, message_usage, run_usage as result_usage
from tui_agent.core.textsafety import escaped, for_terminal
from tui_agent.core.content import JsonObject
from tui_agent.core.events import (
    ApprovalDenied, Event, Notice, PermissionModeChanged, PlanUpdated, TextDelta, ToolAuthored, ToolCallFinished,
    ToolCallStarted, TurnFailed, TurnFinished, Usage,
)

OUTPUT_FORMATS = ("text", "json", "stream-json")
CLAUDE_CODE_PROTOCOL = "2.0.0"
"""`claude_code_version` of the init line: the Claude Code stream-json protocol these lines follow (the Agent SDK
reads it for feature detection); tuiagent's own version is `tuiagent_version`."""
CONTEXT_WINDOW = 200_000


def event_type(event: Event) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", type(event).__name__).lower()


class ToolCallLine(TypedDict, total=False):
    """A tool call as the result line's `tool_calls` lists it (is_error and duration_ms once it finished)."""

    id: str
    name: str
    input: JsonObject
    input_replaced: bool  # a can_use_tool answer's updatedInput replaced the model's
    is_error: bool
    duration_ms: float


class Denial(TypedDict):
    """A refused call as the result line's `permission_denials` lists it (Claude Code's fields)."""

    tool_name: str
    tool_use_id: str
    tool_input: JsonObject


def event_json(event: Event) -> dict[str, object]:
    return {"type": event_type(event), **asdict(event)}


def _short_args(arguments: JsonObject, limit: int = 120) -> str:
    text = escaped(json.dumps(arguments, ensure_ascii=False, default=str))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def new_uuid() -> str:
    return str(uuid.uuid4())


@dataclass(frozen=True)
class RunInfo:
    """What the `system` `init` line tells: the session, where, with which model, tools, MCP servers (name and
    status) and permission mode (Claude Code's name for it)."""

    session_id: str
    model: str
    cwd: str
    tools: list[str]
    permission_mode: str
    mcp_servers: list[dict[str, str]] = field(default_factory=list)
    api_key_source: str = "none"
    version: str = "0"
    max_output_tokens: int = 0


class HeadlessPrinter:
    """Writes a turn's events in one of OUTPUT_FORMATS and builds the final result object."""

    def __init__(self, output_format: str, stdout: TextIO, stderr: TextIO) -> None:
        if output_format not in OUTPUT_FORMATS:
            raise ValueError(f"--output-format must be one of {', '.join(OUTPUT_FORMATS)}")
        self.format = output_format
        self.out = stdout
        self.err = stderr
        self.tool_calls: list[ToolCallLine] = []
        self.denials: list[Denial] = []
        self.final_text = ""
        self.error: TurnFailed | None = None
        self.finished = False
        self._at_line_start = True
        self._started = time.monotonic()
        self._info: RunInfo | None = None
        self._turns: Sequence[Turn] = ()
        self._emitted = 0
        self._last_usage: Usage | None = None
        self.warnings: list[str] = []  # warning/error notices (e.g. the session file cannot be written)
        self.stop_reason: str | None = None
        self.interrupted = False
        self._api_ms = 0.0
        self._request_began: float | None = None
        self.partial = False
        """stream-json: print each raw API stream event as a `stream_event` line (--include-partial-messages)."""
        self.replies = ReplyTracker()
        self._denied: set[str] = set()

    def start(self, info: RunInfo, turns: Sequence[Turn]) -> None:
        """Begin a turn: remember the conversation's turns to follow (new ones only) and print the init line."""
        self._info, self._turns, self._emitted = info, turns, len(turns)
        self.tool_calls, self.denials, self.final_text, self.error, self.finished = [], [], "", None, False
        self.stop_reason, self.interrupted, self._api_ms = None, False, 0.0
        self._started = self._request_began = time.monotonic()
        self.replies.reset()
        if self.format == "stream-json":
            self.emit({"type": "system", "subtype": "init", "uuid": new_uuid(), "session_id": info.session_id,
                        "apiKeySource": info.api_key_source, "claude_code_version": CLAUDE_CODE_PROTOCOL,
                        "cwd": info.cwd, "tools": info.tools, "mcp_servers": info.mcp_servers, "model": info.model,
                        "permissionMode": info.permission_mode, "slash_commands": [], "output_style": "default",
                        "skills": [], "plugins": [], "tuiagent_version": info.version})

    def handle(self, event: Event) -> None:
        self._remember(event)
        if self.format == "stream-json":
            self._emit_new_messages()
        elif self.format == "text":
            self._print_text(event)

    def stream_event(self, event: Any) -> None:
        """The model client's listener: every raw API stream event (an `anthropic` SDK model), as it arrives."""
        partial = self.partial and self.format == "stream-json"
        if not partial and event.type not in USAGE_EVENTS:
            return
        raw: JsonObject = event.to_dict(mode="json")  # as the API sent it (the SDK's models keep unset fields out)
        self.replies.feed(raw)
        if partial:
            self.emit({"type": "stream_event", "uuid": new_uuid(), "session_id": self._info.session_id if self._info else "",
                       "event": raw, "parent_tool_use_id": None})

    def emit(self, line: Mapping[str, object]) -> None:
        self.out.write(json.dumps(line, ensure_ascii=False, default=str) + "\n")
        self.out.flush()

    def _emit_new_messages(self) -> None:
        """Print the turns added to the conversation since the last call: assistant replies and tool results."""
        self._emitted = min(self._emitted, len(self._turns))  # a failed prompt taken back
        session_id = self._info.session_id if self._info else ""
        for turn in self._turns[self._emitted:]:
            message = message_of(turn)
            content = message.get("content")
            if message.get("role") == "assistant" and isinstance(content, list):
                self.emit({"type": "assistant", "uuid": new_uuid(), "message": self._api_message(content), "parent_tool_use_id": None,
                            "session_id": session_id})
            elif message.get("role") == "user" and isinstance(content, list):
                results = [block for block in content if block.get("type") == "tool_result"]
                if results:  # the prompt itself is not echoed, as in Claude Code
                    self.emit({"type": "user", "uuid": new_uuid(), "message": {"role": "user", "content": results},
                                "parent_tool_use_id": None, "session_id": session_id})
        self._emitted = len(self._turns)

    def _api_message(self, content: list[Any]) -> dict[str, object]:
        """The API's message this assistant line shows: its id, model and usage as the API sent them (ours only for a
        model that is not the API's, e.g. a scripted one in tests)."""
        calls = any(isinstance(block, dict) and block.get("type") == "tool_use" for block in content)
        api = self.replies.take()
        if api is not None:
            usage = message_usage(api.usage)
        else:
            usage = message_usage(api_usage(_usage_totals(self._last_usage) if self._last_usage else UsageTotals()))
        return {"id": api.id if api and api.id else f"msg_{uuid.uuid4().hex[:24]}", "type": "message", "role": "assistant",
                "model": api.model if api and api.model else self._info.model if self._info else "", "content": content,
                "stop_reason": (api.stop_reason if api and api.stop_reason else
                                "tool_use" if calls else (self.stop_reason or "end_turn")),
                "stop_sequence": api.stop_sequence if api else None,
                "stop_details": None, "container": None, "context_management": None, "diagnostics": None, "usage": usage}

    def _remember(self, event: Event) -> None:
        self._time_requests(event)
        if isinstance(event, ToolCallStarted):
            self.tool_calls.append({"id": event.call_id, "name": event.name, "input": event.arguments})
        elif isinstance(event, ToolCallFinished):
            for call in self.tool_calls:
                if call["id"] == event.call_id:
                    call["is_error"], call["duration_ms"] = event.is_error, round(event.duration_ms, 1)
        elif isinstance(event, ApprovalDenied):
            denied = next((c for c in self.tool_calls if c["id"] == event.call_id), None)
            self.denials.append({"tool_name": event.name, "tool_use_id": event.call_id,
                                 "tool_input": denied["input"] if denied else {}})
        elif isinstance(event, Usage):
            self._last_usage = event
        elif isinstance(event, Notice) and event.level != "info":
            self.warnings.append(event.message)
            if self.format != "text":  # text prints it with the rest; JSON output keeps stdout to JSON objects
                self.err.write(f"[{event.level}] {escaped(event.message)}\n")
                self.err.flush()
        elif isinstance(event, TurnFinished):
            self.final_text, self.finished, self.stop_reason = event.text, True, event.stop_reason
        elif isinstance(event, TurnFailed):
            self.error = event

    def _time_requests(self, event: Event) -> None:
        """duration_api_ms: each model request runs from the prompt (or the last tool result) to its usage report."""
        now = time.monotonic()
        if isinstance(event, ToolCallFinished):
            self._request_began = now
        elif isinstance(event, Usage) and self._request_began is not None:
            self._api_ms += now - self._request_began
            self._request_began = None

    def _line(self, text: str, stream: TextIO | None = None) -> None:
        target = stream or self.out
        if not self._at_line_start:  # the answer's line ends before a line on either stream
            self.out.write("\n")
            self.out.flush()
            self._at_line_start = True
        target.write(for_terminal(target, text) + "\n")
        target.flush()

    def _print_text(self, event: Event) -> None:
        if isinstance(event, TextDelta):
            self.out.write(for_terminal(self.out, event.text))
            self.out.flush()
            self._at_line_start = event.text.endswith("\n")
        elif isinstance(event, ToolCallStarted):  # what the answer is made with: stderr, stdout is the answer's
            self._line(f"[tool] {escaped(event.name)} {_short_args(event.arguments)}", self.err)
        elif isinstance(event, ToolCallFinished) and event.is_error and event.call_id not in self._denied:
            first_line = event.result.strip().splitlines()[0] if event.result.strip() else ""
            self._line(f"[tool] {escaped(event.name)} failed: {escaped(first_line[:200])}", self.err)
        elif isinstance(event, ToolAuthored):
            verb = "created" if event.created else "updated"
            self._line(f"[authored] {event.kind} {escaped(event.name)} {verb}" + (f" (commit {event.commit[:10]})" if event.commit else " (not committed)"), self.err)
        elif isinstance(event, ApprovalDenied):  # its call's failure says the same: this line alone
            self._denied.add(event.call_id)
            self._line(f"[denied] {escaped(event.name)}: {event.reason}", self.err)
        elif isinstance(event, Notice):  # file and tool names in it are the project's: one line, escaped
            self._line(f"[{event.level}] {escaped(event.message)}", self.err)
        elif isinstance(event, PlanUpdated):
            self._line("[plan] " + escaped(checklist(event.entries).replace("\n", " · ")), self.err)
        elif isinstance(event, PermissionModeChanged):
            self._line(f"[mode] the plan was approved: the permission mode is now {event.mode}", self.err)
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
        ok = self.finished and self.error is None and not self.interrupted
        if self.format == "text" and edited_files:
            names = ", ".join(escaped(name) for name in edited_files)  # a newline in a name cannot fake a line
            self._line(f"[edited] {len(edited_files)} project file(s): {names}", self.err)
        if self.format == "stream-json":
            self._emit_new_messages()
        if self.format in ("json", "stream-json"):
            self.emit(self._result(ok, session_id=session_id, model=model, totals=run_usage,
                                    session_usage=session_usage, edited_files=edited_files))
        return 0 if ok else 1

    def _result(self, ok: bool, *, session_id: str, model: str, totals: UsageTotals, session_usage: UsageTotals,
                edited_files: list[str] | None) -> dict[str, object]:
        max_turns = self.error is not None and self.error.kind == "max_turns"
        subtype = "success" if ok else ("error_max_turns" if max_turns else "error_during_execution")
        terminal = ("completed" if ok else "aborted_streaming" if self.interrupted else "max_turns" if max_turns
                    else "error")
        message = "interrupted" if self.interrupted else self.error.message if self.error else None
        cost = round(totals.cost_usd, 6) if price_for(model) is not None else None  # unknown, not guessed
        line: dict[str, object] = {
            "type": "result", "subtype": subtype, "uuid": new_uuid(), "is_error": not ok,
            "duration_ms": round((time.monotonic() - self._started) * 1000), "duration_api_ms": round(self._api_ms * 1000),
            "num_turns": totals.requests, "result": self.final_text, "stop_reason": self.stop_reason,
            "session_id": session_id, "total_cost_usd": cost, "usage": result_usage(totals, self.replies.replies),
            "modelUsage": {model: self._model_usage(totals, cost)} if totals.requests else {},
            "permission_denials": self.denials, "terminal_reason": terminal,
            "model": model, "error": message, "error_kind": "interrupted" if self.interrupted else self.error.kind if self.error else None,
            "tool_calls": self.tool_calls, "session_usage": session_usage.to_dict(), "edited_files": edited_files,
            "warnings": self.warnings,
        }
        if not ok:
            line["errors"] = [message] if message else []
        return line

    def _model_usage(self, usage: UsageTotals, cost: float | None) -> dict[str, int | float | None]:
        return {"inputTokens": usage.input_tokens, "outputTokens": usage.output_tokens,
                "cacheReadInputTokens": usage.cache_read_tokens, "cacheCreationInputTokens": usage.cache_write_tokens,
                "webSearchRequests": 0, "costUSD": cost, "contextWindow": CONTEXT_WINDOW,
                "maxOutputTokens": self._info.max_output_tokens if self._info else 0}


def failed_result(message: str) -> dict[str, object]:
    """The fields of a `result` line for a run that failed before any turn (no session, no usage)."""
    return {"type": "result", "subtype": "error_during_execution", "uuid": new_uuid(), "is_error": True,
            "duration_ms": 0, "duration_api_ms": 0, "num_turns": 0, "result": "", "stop_reason": None,
            "session_id": "", "total_cost_usd": 0.0, "usage": result_usage(UsageTotals(), []), "modelUsage": {},
            "permission_denials": [], "terminal_reason": "error", "errors": [message]}


def _usage_totals(event: Usage) -> UsageTotals:
    return UsageTotals(event.input_tokens, event.output_tokens, event.cache_read_tokens, event.cache_write_tokens, event.cost_usd, 1)


__all__ = ["HeadlessPrinter", "OUTPUT_FORMATS", "RunInfo", "event_json", "failed_result"]
