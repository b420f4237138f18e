"""The request builder: one model request's arguments derived from the conversation's turns, the prompt and settings.

The messages obey the API's rules (history.py: no blank text, tool results first, roles alternating), thinking blocks
lead their assistant message (as the API sent them; a merged message keeps them first), no thinking at all for a
model tuiagent does not know to think, and cache_control sits on the last block and on the block where the previous
request ended (frozen_prefix.with_breakpoints).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypedDict

from tui_agent.core.agent.history import request_messages, without_thinking
from tui_agent.core.agent.frozen_prefix import with_breakpoints
from tui_agent.core.agent.thinking import ThinkingConfig
from tui_agent.core.agent.turns import THINKING_TYPES, Turn, merged_messages
from tui_agent.core.content import ApiMessage, TextBlock, ToolDefinition

CacheMark = tuple[int, int]


@dataclass(frozen=True)
class PromptParts:
    """The system blocks and the `tools` array (fixed for a conversation by its PromptPlan)."""

    system: list[TextBlock]
    tools: list[ToolDefinition]


@dataclass(frozen=True)
class RequestSettings:
    """What shapes a request besides the conversation: the model, its thinking, where the last request ended."""

    model: str
    thinking: ThinkingConfig
    previous_end: CacheMark | None = None


class ReplyArguments(TypedDict):
    """The keyword arguments of `Model.stream_reply`."""

    system: list[TextBlock]
    tools: list[ToolDefinition]
    messages: list[ApiMessage]
    thinking: ThinkingConfig


@dataclass(frozen=True)
class Request:
    """`kwargs` for `Model.stream_reply`; `end` is where its messages end (the next request's `previous_end`)."""

    kwargs: ReplyArguments
    end: CacheMark | None


def build_request(turns: Sequence[Turn], prompt: PromptParts, settings: RequestSettings) -> Request:
    messages = request_messages(merged_messages(turns))
    if settings.thinking.strips_thinking(settings.model):
        messages = without_thinking(messages)
    messages = [_thinking_first(message) for message in messages]
    marked, end = with_breakpoints(messages, settings.previous_end)
    return Request({"system": prompt.system, "tools": prompt.tools, "messages": marked, "thinking": settings.thinking}, end)


def _thinking_first(message: ApiMessage) -> ApiMessage:
    """An assistant message with its thinking blocks first (the order of each kind kept)."""
    content = message["content"]
    if message["role"] != "assistant" or not any(block["type"] in THINKING_TYPES for block in content[1:]):
        return message
    thinking = [block for block in content if block["type"] in THINKING_TYPES]
    return {**message, "content": thinking + [block for block in content if block["type"] not in THINKING_TYPES]}
