"""An in-process model that plays scripted replies through the Model protocol (fast unit tests of the loop)."""

from __future__ import annotations

import copy
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from tui_agent.core.agent.model import ModelError, ModelReply
from tui_agent.core.agent.pricing import RequestUsage
from tui_agent.core.events import Event, TextDelta


@dataclass
class ScriptedModel:
    """Replies in order; each request (system, tools, messages) is kept, deep-copied, for assertions."""

    replies: deque[ModelReply | ModelError] = field(default_factory=deque)
    model: str = "scripted"
    base_url: str = "in-process"
    max_tokens: int = 4096
    requests: list[dict[str, Any]] = field(default_factory=list)

    def say(self, *blocks: dict[str, Any], stop_reason: str | None = None) -> ScriptedModel:
        uses_tools = any(block["type"] == "tool_use" for block in blocks)
        reason = stop_reason or ("tool_use" if uses_tools else "end_turn")
        self.replies.append(ModelReply(list(blocks), reason, RequestUsage(input_tokens=10, output_tokens=5)))
        return self

    def fail(self, kind: str, message: str) -> ScriptedModel:
        self.replies.append(ModelError(kind, message))
        return self

    async def stream_reply(
        self, *, system: list[dict[str, Any]], tools: list[dict[str, Any]], messages: list[dict[str, Any]],
        thinking: Any = None,
    ) -> AsyncIterator[Event | ModelReply]:
        self.requests.append(copy.deepcopy({"system": system, "tools": tools, "messages": messages, "thinking": thinking}))
        if not self.replies:
            raise AssertionError(f"the script has no reply left for request {len(self.requests)}")
        reply = self.replies.popleft()
        if isinstance(reply, ModelError):
            raise reply
        for block in reply.content:
            if block["type"] == "text":
                yield TextDelta(block["text"])
        yield reply

    async def aclose(self) -> None:
        return None


def text_block(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def tool_use_block(name: str, arguments: dict[str, Any], call_id: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": arguments}
