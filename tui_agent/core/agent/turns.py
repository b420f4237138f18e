"""Typed turns of a conversation: what the person said, what the model replied (its blocks verbatim), the tools' results.

Blocks are Messages API content blocks (the SDK's TypedDicts, tui_agent.core.content) kept exactly as they came, thinking and redacted_thinking included
(signature and data untouched: the API refuses a modified one). A turn is never changed in place: an operation that
changes one (shortening, leaving thinking out) makes a new turn. Turns compare by identity, so `rollback_to(turn)`
finds the very turn it was given.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import ClassVar, Literal, cast

from tui_agent.core.content import ApiMessage, ContentBlock, ToolUseBlock, text_block

Block = ContentBlock
THINKING_TYPES = ("thinking", "redacted_thinking")
UserKind = Literal["prompt", "note"]


@dataclass(frozen=True, eq=False)
class UserTurn:
    """A prompt the person sent, or a note tuiagent adds for the model (an undo, a catalog change, a shell command)."""

    blocks: tuple[Block, ...]
    kind: UserKind = "prompt"
    role: ClassVar[Literal["user"]] = "user"

    @property
    def record_kind(self) -> str:
        return self.kind


@dataclass(frozen=True, eq=False)
class AssistantTurn:
    """One reply of the model: thinking, text and tool_use blocks in the order they came."""

    blocks: tuple[Block, ...]
    role: ClassVar[Literal["assistant"]] = "assistant"
    record_kind: ClassVar[str] = "assistant"

    @property
    def thinking(self) -> tuple[Block, ...]:
        return tuple(block for block in self.blocks if block.get("type") in THINKING_TYPES)

    @property
    def tool_uses(self) -> tuple[ToolUseBlock, ...]:
        return tuple(block for block in self.blocks if block["type"] == "tool_use")

    @property
    def text(self) -> str:
        return "".join(block["text"] for block in self.blocks if block["type"] == "text")

    def without_thinking(self) -> AssistantTurn:
        kept = tuple(block for block in self.blocks if block.get("type") not in THINKING_TYPES)
        return replace(self, blocks=kept or (text_block("(no content)"),))


@dataclass(frozen=True, eq=False)
class ToolResults:
    """The tool_result blocks answering the assistant turn before it (and any note riding along, after them)."""

    blocks: tuple[Block, ...]
    role: ClassVar[Literal["user"]] = "user"
    record_kind: ClassVar[str] = "tool_results"

    @property
    def answered(self) -> set[str]:
        return {block["tool_use_id"] for block in self.blocks if block["type"] == "tool_result"}


Turn = UserTurn | AssistantTurn | ToolResults
RECORD_KINDS = ("prompt", "note", "assistant", "tool_results")


def message_of(turn: Turn) -> ApiMessage:
    """The turn as one API message (a fresh list; the blocks are shared, never to be changed in place)."""
    return {"role": turn.role, "content": list(turn.blocks)}


def merged_messages(turns: Iterable[Turn]) -> list[ApiMessage]:
    """The turns as API messages, neighbours of the same role merged (tool results first in a user message): a prompt
    that follows a cancelled turn's results joins them in one user message, as the API requires."""
    messages: list[ApiMessage] = []
    for turn in turns:
        if messages and messages[-1]["role"] == turn.role:
            messages[-1]["content"].extend(turn.blocks)
        else:
            messages.append(message_of(turn))
    for message in messages:
        if message["role"] == "user":
            content = message["content"]
            message["content"] = ([b for b in content if b["type"] == "tool_result"]
                                  + [b for b in content if b["type"] != "tool_result"])
    return messages


def turn_of(message: object, kind: object = None) -> Turn | None:
    """The turn a session record holds: `kind` names it (newer files); an older file's record is read by its role and
    blocks. None for a record that holds no usable message (session files are hostile input)."""
    if not isinstance(message, dict):
        return None
    content = message.get("content", "")
    blocks: tuple[Block, ...] = (text_block(content),) if isinstance(content, str) else (
        tuple(cast(Block, block) for block in content if isinstance(block, dict) and isinstance(block.get("type"), str))
        if isinstance(content, list) else ())  # a block of a type tuiagent does not know is kept as it came
    role = message.get("role")
    if kind not in RECORD_KINDS:
        kind = None
    if role == "assistant":
        return AssistantTurn(blocks) if kind in (None, "assistant") else None
    if role != "user":
        return None
    if any(block["type"] == "tool_result" for block in blocks):  # whatever the record says: results answer calls
        return ToolResults(blocks)
    return UserTurn(blocks, "note" if kind == "note" else "prompt")


def turns_of(messages: Sequence[Mapping[str, object]]) -> list[Turn]:
    """Turns from API messages (an older caller's list of dicts)."""
    return [turn for turn in (turn_of(message) for message in messages) if turn is not None]
