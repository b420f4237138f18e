"""One assistant message from raw Messages API stream events: the SDK accumulates it, held to the project's rules.

The `anthropic` SDK's own accumulator (`accumulate_event`, what `messages.stream()`'s MessageStream runs on each event)
builds the message: its blocks (text and citations, thinking and its signature, redacted_thinking, server tool blocks),
usage, stop reason and stop sequence. What stays here is what the SDK does not guarantee:
- a stream that ended before `message_stop` is refused (StreamCut), where the SDK's snapshot would look complete;
- tool inputs are parsed strictly from their raw JSON: the SDK parses them in jiter's partial mode, so an input cut
  short reads as a smaller valid object and invalid JSON raises in the middle of the stream (ending it); here both
  become an `invalid_inputs` entry, as does a value that is not an object or holds an infinite or NaN number;
- blank text blocks are dropped (models send "\\n\\n" before a tool call; the API refuses it when replayed).
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from tui_agent.core.content import ContentBlock, JsonObject
from tui_agent.core.errors import TuiAgentError

if TYPE_CHECKING:
    from anthropic.types import ParsedMessage, RawMessageStreamEvent

KEPT_BLOCKS = ("text", "tool_use", "thinking", "redacted_thinking", "server_tool_use", "web_search_tool_result")
"""The block types a reply keeps; any other (a server's own invention) is left out of the history."""


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
    of the last event fed); `finish()` once the stream ended. Blocks are sent back exactly as the API sent them
    (the API refuses a modified thinking block)."""

    def __init__(self) -> None:
        from anthropic.lib.streaming._messages import accumulate_event  # loaded with the SDK, after the first paint

        self._accumulate = accumulate_event
        self._message: ParsedMessage[None] | None = None
        self._raw_inputs: defaultdict[int, list[str]] = defaultdict(list)
        self._stopped = False
        self.thinking = ""

    def feed(self, event: RawMessageStreamEvent) -> str:
        self.thinking = ""
        if event.type == "message_stop":
            self._stopped = True
        if self._message is None and event.type != "message_start":
            return ""  # as MessageStream does: nothing to add it to
        if event.type in ("content_block_delta", "content_block_stop") and not self._has_block(event.index):
            return ""  # a frame for a block that never started
        if event.type == "content_block_delta" and event.delta.type == "input_json_delta":
            self._raw_inputs[event.index].append(event.delta.partial_json)  # parsed strictly in finish()
            return ""
        self._message = self._accumulate(event=event, current_snapshot=self._message, json_bufs={})
        if event.type != "content_block_delta":
            return ""
        block_type = self._message.content[event.index].type
        if event.delta.type == "thinking_delta" and block_type == "thinking":
            self.thinking = event.delta.thinking
        if event.delta.type == "text_delta" and block_type == "text":
            return event.delta.text
        return ""

    def _has_block(self, index: int) -> bool:
        return self._message is not None and 0 <= index < len(self._message.content)

    def finish(self) -> AssembledReply:
        """The complete message; raise StreamCut when `message_stop` never came."""
        if not self._stopped or self._message is None:
            raise StreamCut("the model's reply stream ended before the message was complete")
        content: list[ContentBlock] = []
        invalid: dict[str, str] = {}
        for index, block in enumerate(self._message.content):
            sent = cast(JsonObject, block.to_dict(mode="json", exclude_none=True))  # only what the API sent
            if sent.get("type") not in KEPT_BLOCKS or (sent["type"] == "text" and not str(sent.get("text", "")).strip()):
                continue
            if sent.get("type") in ("tool_use", "server_tool_use"):
                sent["input"], problem = _parse_input("".join(self._raw_inputs.get(index, [])))
                if sent["type"] == "tool_use" and problem:  # a server tool's: the API ran it, nothing to refuse or send
                    invalid[str(sent["id"])] = problem
            content.append(cast(ContentBlock, sent))
        usage = self._message.usage
        return AssembledReply(
            content=content, stop_reason=self._message.stop_reason or "end_turn",
            input_tokens=usage.input_tokens or 0, output_tokens=usage.output_tokens or 0,
            cache_read_tokens=usage.cache_read_input_tokens or 0,
            cache_write_tokens=usage.cache_creation_input_tokens or 0, invalid_inputs=invalid,
            stop_sequence=self._message.stop_sequence,
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
