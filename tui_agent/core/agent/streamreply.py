"""Assembling one assistant message from raw Messages API stream events, strictly: complete or not, valid JSON or not."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, cast

from tui_agent.core.content import ContentBlock, JsonObject
from tui_agent.core.errors import TuiAgentError


class StreamCut(TuiAgentError):
    """The stream ended before `message_stop`: the reply is incomplete and must not be used."""


@dataclass
class AssembledReply:
    """The parts of a complete assistant message; `invalid_inputs` maps a tool_use id to why its input is unusable."""

    content: list[ContentBlock]
    stop_reason: str
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    invalid_inputs: dict[str, str] = field(default_factory=dict)
    stop_sequence: str | None = None


class ReplyAssembler:
    """Feed it every raw stream event (`feed` returns the text delta, if any, and `thinking` holds the thinking delta
    of the last event fed); `finish()` once the stream ended. Thinking and redacted_thinking blocks are kept exactly as
    they came (text, signature, data): the API refuses a modified one when it is sent back."""

    def __init__(self) -> None:
        self._blocks: dict[int, ContentBlock] = {}
        self._raw_inputs: dict[int, list[str]] = {}
        self._usage: dict[str, int] = {}
        self._stop_reason: str | None = None
        self._stop_sequence: str | None = None
        self._stopped = False
        self.thinking = ""

    def feed(self, event: Any) -> str:
        self.thinking = ""
        kind = getattr(event, "type", "")
        if kind == "message_start":
            self._take_usage(event.message.usage)
        elif kind == "content_block_start":
            self._start(event.index, event.content_block)
        elif kind == "content_block_delta":
            return self._delta(event.index, event.delta)
        elif kind == "message_delta":
            self._stop_reason = event.delta.stop_reason or self._stop_reason
            self._stop_sequence = getattr(event.delta, "stop_sequence", None) or self._stop_sequence
            self._take_usage(event.usage)
        elif kind == "message_stop":
            self._stopped = True
        return ""

    def _start(self, index: int, block: Any) -> None:
        if block.type == "text":
            self._blocks[index] = {"type": "text", "text": block.text or ""}
        elif block.type == "tool_use":
            self._blocks[index] = {"type": "tool_use", "id": block.id, "name": block.name, "input": {}}
            self._raw_inputs[index] = []
        elif block.type == "thinking":
            self._blocks[index] = {"type": "thinking", "thinking": block.thinking or "", "signature": block.signature or ""}
        elif block.type == "redacted_thinking":
            self._blocks[index] = {"type": "redacted_thinking", "data": block.data}
        elif block.type == "server_tool_use":  # a web search the API runs itself; its input streams as a tool's
            self._blocks[index] = {"type": "server_tool_use", "id": block.id, "name": block.name, "input": {}}
            self._raw_inputs[index] = []
        elif block.type == "web_search_tool_result":  # complete at its start; sent back exactly as it came
            self._blocks[index] = cast(ContentBlock, block.model_dump(mode="json", exclude_none=True))

    def _delta(self, index: int, delta: Any) -> str:
        block = self._blocks.get(index)
        if block is None:
            return ""
        if delta.type == "text_delta" and block["type"] == "text":
            block["text"] += delta.text
            return str(delta.text)
        if delta.type == "input_json_delta" and index in self._raw_inputs:
            self._raw_inputs[index].append(delta.partial_json)
        elif delta.type == "thinking_delta" and block["type"] == "thinking":
            block["thinking"] += delta.thinking
            self.thinking = str(delta.thinking)
        elif delta.type == "signature_delta" and block["type"] == "thinking":
            block["signature"] += delta.signature
        elif delta.type == "citations_delta" and block["type"] == "text":  # a search result the text cites
            citations = list(block.get("citations") or [])
            block["citations"] = [*citations, delta.citation.model_dump(mode="json", exclude_none=True)]
        return ""

    def _take_usage(self, usage: Any) -> None:
        for name in ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"):
            value = getattr(usage, name, None)
            if isinstance(value, int):
                self._usage[name] = value

    def finish(self) -> AssembledReply:
        """The complete message; raise StreamCut when `message_stop` never came."""
        if not self._stopped:
            raise StreamCut("the model's reply stream ended before the message was complete")
        content: list[ContentBlock] = []
        invalid: dict[str, str] = {}
        for index in sorted(self._blocks):
            block = self._blocks[index]
            if block["type"] == "text":
                if block["text"].strip():  # models send "\n\n" before a tool call; the API refuses it when replayed
                    content.append(block)
                continue
            if block["type"] not in ("tool_use", "server_tool_use"):  # thinking, redacted_thinking, web_search_tool_result
                content.append(block)
                continue
            tool_input, problem = _parse_input("".join(self._raw_inputs.get(index, [])))
            if block["type"] == "tool_use" and problem:  # a server tool's: the API ran it, nothing to refuse or send
                invalid[block["id"]] = problem
            content.append(cast(ContentBlock, {**block, "input": tool_input}))
        return AssembledReply(
            content=content, stop_reason=self._stop_reason or "end_turn",
            input_tokens=self._usage.get("input_tokens", 0), output_tokens=self._usage.get("output_tokens", 0),
            cache_read_tokens=self._usage.get("cache_read_input_tokens", 0),
            cache_write_tokens=self._usage.get("cache_creation_input_tokens", 0), invalid_inputs=invalid,
            stop_sequence=self._stop_sequence,
        )


def _parse_input(raw: str) -> tuple[JsonObject, str]:
    """The tool input as an object, or {} and why it could not be used."""
    if not raw.strip():
        return {}, ""
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as error:
        shown = raw if len(raw) <= 200 else raw[:200] + "…"
        return {}, f"the input of this call is not valid JSON ({error.msg} at character {error.pos}): {shown}"
    if not isinstance(value, dict):
        return {}, f"the input of this call must be a JSON object, not {type(value).__name__}"
    where = _non_finite(value)
    if where is not None:  # 1e400 reads as inf, which no request can carry back: the call is refused, not replayed
        return {}, f"argument {where[0]} must be a finite number, not {where[1]} (JSON has no infinity or NaN)"
    return value, ""


def _non_finite(value: Any, path: str = "") -> tuple[str, float] | None:
    """Where the first infinite or NaN number sits in a parsed input (e.g. ("'x'", inf)), or None."""
    if isinstance(value, float) and not math.isfinite(value):
        return path, value
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        found = _non_finite(item, f"{path}[{key!r}]" if path else repr(key))
        if found is not None:
            return found
    return None
