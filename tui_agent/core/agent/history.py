"""The conversation as the Messages API accepts it: no blank text blocks, tool results first, roles alternating."""

from __future__ import annotations

from collections.abc import Iterable

from tui_agent.core.agent.turns import THINKING_TYPES
from tui_agent.core.content import ApiMessage, ContentBlock, Role, text_block

EMPTY_PLACEHOLDER = "(no content)"


def usable_block(block: ContentBlock) -> bool:
    """False for a text block the API refuses (empty or whitespace-only, as models send before a tool call)."""
    return block["type"] != "text" or bool(block["text"].strip())


def clean_blocks(role: Role, content: str | Iterable[ContentBlock]) -> list[ContentBlock]:
    """The message's blocks without blank text, tool results first in a user message, never empty."""
    blocks = [text_block(content)] if isinstance(content, str) else [b for b in content if isinstance(b, dict)]
    blocks = [block for block in blocks if usable_block(block)]
    if role == "user":
        blocks = [b for b in blocks if b["type"] == "tool_result"] + [b for b in blocks if b["type"] != "tool_result"]
    return blocks or [text_block(EMPTY_PLACEHOLDER)]


def _placeholder(block: ContentBlock) -> bool:
    return block["type"] == "text" and block["text"] == EMPTY_PLACEHOLDER


def request_messages(messages: list[ApiMessage]) -> list[ApiMessage]:
    """A valid copy of the history to send: blank text dropped, same-role neighbours merged, no trailing whitespace
    at the end of a final assistant message. The stored history is not changed (blocks are shared, not copied)."""
    cleaned: list[ApiMessage] = []
    for message in messages:
        role = message.get("role", "user")
        blocks = clean_blocks(role, message.get("content", ""))
        if cleaned and cleaned[-1]["role"] == role:
            merged = [b for b in cleaned[-1]["content"] + blocks if not _placeholder(b)]
            cleaned[-1] = {"role": role, "content": clean_blocks(role, merged)}
        else:
            cleaned.append({"role": role, "content": blocks})
    if cleaned and cleaned[-1]["role"] == "assistant":
        last = cleaned[-1]["content"][-1]
        if last["type"] == "text" and last["text"] != last["text"].rstrip():
            cleaned[-1]["content"] = cleaned[-1]["content"][:-1] + [{**last, "text": last["text"].rstrip()}]
    return cleaned


def without_thinking(messages: list[ApiMessage]) -> list[ApiMessage]:
    """The messages without thinking blocks, for a server that is not sent thinking and may not know them (a local
    model after /model, a session resumed with another server); a message left empty gets the placeholder."""
    if not any(block["type"] in THINKING_TYPES for message in messages for block in message["content"]):
        return messages
    return [{**message, "content": [block for block in message["content"] if block["type"] not in THINKING_TYPES]
             or [text_block(EMPTY_PLACEHOLDER)]} for message in messages]
