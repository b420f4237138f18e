"""Context-limit handling: estimate a request's size and shorten old tool results so the session can go on."""

from __future__ import annotations

import json
from tui_agent.core.agent.images import image_token_correction
from tui_agent.core.agent.system_prompt import estimate_tokens
from tui_agent.core.content import ApiMessage, ContentBlock, TextBlock, ToolDefinition, ToolResultBlock

KEEP_RECENT_MESSAGES = 4
SHORTENED_KEEP_CHARS = 300
SHORTENED_MARK = "[shortened to save context"


def request_tokens(system: list[TextBlock], tools: list[ToolDefinition], messages: list[ApiMessage]) -> int:
    return (estimate_tokens(json.dumps(system)) + estimate_tokens(json.dumps(tools)) + estimate_tokens(json.dumps(messages))
            - image_token_correction(messages))


def _result_text(block: ToolResultBlock) -> str:
    content = block.get("content", "")
    if isinstance(content, str):
        return content
    return "\n".join(part["text"] for part in content if part["type"] == "text")


def shorten_old_tool_results(messages: list[ApiMessage], *, keep_recent: int = KEEP_RECENT_MESSAGES) -> int:
    """Replace long tool results outside the last `keep_recent` messages with their head and a note; the count shortened."""
    shortened = 0
    for message in messages[: max(0, len(messages) - keep_recent)]:
        content = message["content"]
        if message["role"] == "assistant":
            shortened += _shorten_tool_inputs(content)
            continue
        for block in content:
            if block["type"] != "tool_result":
                continue
            parts = block.get("content", "")
            if isinstance(parts, list) and any(part["type"] == "image" for part in parts):
                block["content"] = f"{_result_text(block)}\n{SHORTENED_MARK}: the image was removed; read the file again to see it]"
                shortened += 1
                continue
            text = _result_text(block)
            if len(text) <= SHORTENED_KEEP_CHARS * 2 or SHORTENED_MARK in text:
                continue
            block["content"] = f"{text[:SHORTENED_KEEP_CHARS]}\n{SHORTENED_MARK}: {len(text) - SHORTENED_KEEP_CHARS} characters removed; call the tool again if you need them]"
            shortened += 1
    return shortened


def _shorten_tool_inputs(content: list[ContentBlock]) -> int:
    """Long string inputs of old tool calls (a create_tool source, a write_file content) keep only their head."""
    shortened = 0
    for block in content:
        if block["type"] != "tool_use" or not isinstance(block.get("input"), dict):
            continue
        for key, value in block["input"].items():
            if isinstance(value, str) and len(value) > SHORTENED_KEEP_CHARS * 4 and SHORTENED_MARK not in value:
                block["input"][key] = f"{value[:SHORTENED_KEEP_CHARS]}\n{SHORTENED_MARK}: {len(value) - SHORTENED_KEEP_CHARS} characters removed]"
                shortened += 1
    return shortened


COMPACTION_KEEP_RECENT = (4, 2, 1)
"""Messages left intact by each successive shortening."""


def shorten_more(messages: list[ApiMessage], level: int) -> tuple[int, int]:
    """Shorten old tool results, keeping fewer recent messages at each level, until something was shortened:
    (results shortened, the next level)."""
    count = 0
    while not count and level < len(COMPACTION_KEEP_RECENT):
        count = shorten_old_tool_results(messages, keep_recent=COMPACTION_KEEP_RECENT[level])
        level += 1
    return count, level
