"""Strict checks of a Messages API request body, answering with the real API's 400 message texts.

The checks cover the documented rules a client most often breaks; `problems(body)` lists every broken rule,
first one first. The texts are the real API's, as quoted verbatim in public bug reports (e.g. anthropics/claude-code
#5989 tool_use without tool_result, #13460 unexpected tool_use_id, #23440 non-whitespace text, #6774 non-empty
content, #54013 cache_control on empty text; apify/tester-mcp-client #11 tool name pattern, #12 tool_result blocks
first; tailcallhq/forgecode #892 unique names, #1872 trailing whitespace; Wei-Shaw/sub2api #176 four breakpoints).
Written in the API's validation style but not found quoted: the input_schema type, tool_use.input, empty text,
first-message-role and no-messages texts.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from tests.fake_api import search_rules, thinking_rules as thinking

TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
MAX_CACHE_BREAKPOINTS = 4


def problems(body: dict[str, Any], ledger: thinking.ThinkingLedger | None = None) -> list[str]:
    """Every rule the request breaks, as the API would word it; empty when the request is valid. The thinking rules
    (tests/fake_api/thinking_rules.py) check signatures always, and the final-assistant-turn rule with the server's ledger."""
    found: list[str] = list(thinking.problems(body, ledger))
    for key in ("model", "max_tokens", "messages"):
        if key not in body:
            found.append(f"{key}: Field required")
    found.extend(_tool_problems(body.get("tools") or [], str(body.get("model", ""))))
    found.extend(_system_problems(body.get("system")))
    messages = body.get("messages")
    if isinstance(messages, list):
        found.extend(_message_problems(messages))
    breakpoints = sum(1 for _ in _cache_controlled(body))
    if breakpoints > MAX_CACHE_BREAKPOINTS:
        found.append(f"A maximum of {MAX_CACHE_BREAKPOINTS} blocks with cache_control may be provided. Found {breakpoints}.")
    return found


def _tool_problems(tools: list[Any], model: str) -> Iterator[str]:
    names: list[str] = []
    for index, tool in enumerate(tools):
        if not isinstance(tool, dict):
            yield f"tools.{index}: Input should be a valid dictionary"
            continue
        name = tool.get("name")
        names.append(str(name))
        if tool.get("type", "custom") != "custom":  # a server tool (tests/fake_api/search_rules.py)
            yield from search_rules.tool_problems(index, tool, model)
            continue
        if not isinstance(name, str) or not TOOL_NAME.fullmatch(name):
            yield f"tools.{index}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'"
        schema = tool.get("input_schema")
        if not isinstance(schema, dict):
            yield f"tools.{index}.custom.input_schema: Field required"
        elif schema.get("type") != "object":
            yield f"tools.{index}.custom.input_schema.type: Input should be 'object'"
    if len(set(names)) != len(names):
        yield "tools: Tool names must be unique."


def _system_problems(system: Any) -> Iterator[str]:
    if system is None or isinstance(system, str):
        return
    for index, block in enumerate(system):
        yield from _text_block_problems(block, f"system.{index}", "system")


def _text_block_problems(block: dict[str, Any], where: str, scope: str) -> Iterator[str]:
    text = block.get("text")
    if not isinstance(text, str):
        yield f"{where}.text: Field required"
    elif not text.strip():
        if "cache_control" in block:
            yield f"{where}.text: cache_control cannot be set for empty text blocks"
        yield f"{scope}: text content blocks must be non-empty" if not text else f"{scope}: text content blocks must contain non-whitespace text"


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [block for block in content or [] if isinstance(block, dict)]


def _message_problems(messages: list[dict[str, Any]]) -> Iterator[str]:
    if not messages:
        yield "messages: at least one message is required"
        return
    if messages[0].get("role") != "user":
        yield 'messages: first message must use the "user" role'
    for index, message in enumerate(messages):
        role = message.get("role")
        if index and role == messages[index - 1].get("role"):
            yield f'messages: roles must alternate between "user" and "assistant", but found multiple "{role}" roles in a row'
        is_final_assistant = index == len(messages) - 1 and role == "assistant"
        if not _blocks(message) and not is_final_assistant:
            yield f"messages.{index}: all messages must have non-empty content except for the optional final assistant message"
        yield from _block_problems(messages, index)
    last = messages[-1]
    if last.get("role") == "assistant" and _blocks(last):
        final = _blocks(last)[-1]
        if final.get("type") == "text" and final.get("text", "") != final.get("text", "").rstrip():
            yield "messages: final assistant content cannot end with trailing whitespace"


def _block_problems(messages: list[dict[str, Any]], index: int) -> Iterator[str]:
    message = messages[index]
    blocks = _blocks(message)
    for position, block in enumerate(blocks):
        kind = block.get("type")
        if kind == "text":
            yield from _text_block_problems(block, f"messages.{index}.content.{position}", "messages")
        elif kind == "tool_use" and not isinstance(block.get("input"), dict):
            yield f"messages.{index}.content.{position}.tool_use.input: Input should be a valid dictionary"
    yield from search_rules.block_problems(blocks, f"messages.{index}.content", message.get("role"))
    if message.get("role") == "user":
        yield from _tool_result_problems(messages, index)
        yield from _image_problems(blocks, f"messages.{index}.content")
    elif message.get("role") == "assistant":
        asked = [block.get("id") for block in blocks if block.get("type") == "tool_use"]
        following = _blocks(messages[index + 1]) if index + 1 < len(messages) else None
        if asked and following is not None:
            answered = {block.get("tool_use_id") for block in following if block.get("type") == "tool_result"}
            missing = [str(call_id) for call_id in asked if call_id not in answered]
            if missing:
                yield (f"messages.{index}: `tool_use` ids were found without `tool_result` blocks immediately after: "
                       f"{', '.join(missing)}. Each `tool_use` block must have a corresponding `tool_result` block in the next message.")


IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
MAX_IMAGE_BASE64 = 5 * 1024 * 1024


def _image_problems(blocks: list[dict[str, Any]], where: str) -> Iterator[str]:
    """Image blocks, at the top of a user message or inside a tool_result's content list."""
    for position, block in enumerate(blocks):
        inner = block.get("content") if block.get("type") == "tool_result" else None
        if isinstance(inner, list):
            yield from _image_problems([part for part in inner if isinstance(part, dict)], f"{where}.{position}.content")
        if block.get("type") != "image":
            continue
        source = block.get("source") if isinstance(block.get("source"), dict) else {}
        data = source.get("data")
        if source.get("media_type") not in IMAGE_TYPES:
            yield f"{where}.{position}.image.source.base64.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'"
        elif not isinstance(data, str) or not data:
            yield f"{where}.{position}.image.source.base64.data: Field required"
        elif len(data) > MAX_IMAGE_BASE64:
            yield f"{where}.{position}.image.source.base64: image exceeds 5 MB maximum: {len(data)} bytes > {MAX_IMAGE_BASE64} bytes"


def _tool_result_problems(messages: list[dict[str, Any]], index: int) -> Iterator[str]:
    blocks = _blocks(messages[index])
    previous = _blocks(messages[index - 1]) if index and messages[index - 1].get("role") == "assistant" else []
    asked = {block.get("id") for block in previous if block.get("type") == "tool_use"}
    for position, block in enumerate(blocks):
        if block.get("type") == "tool_result" and block.get("tool_use_id") not in asked:
            yield (f"messages.{index}.content.{position}: unexpected `tool_use_id` found in `tool_result` blocks: "
                   f"{block.get('tool_use_id')}. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.")
    results = sum(1 for block in blocks if block.get("type") == "tool_result")
    leading = next((position for position, block in enumerate(blocks) if block.get("type") != "tool_result"), len(blocks))
    if results > leading:
        yield (f"messages.{index}: Did not find {results} `tool_result` block(s) at the beginning of this message. "
               "Messages following `tool_use` blocks must begin with a matching number of `tool_result` blocks.")


def _cache_controlled(body: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for tool in body.get("tools") or []:
        if isinstance(tool, dict) and "cache_control" in tool:
            yield tool
    system = body.get("system")
    if isinstance(system, list):
        yield from (block for block in system if isinstance(block, dict) and "cache_control" in block)
    for message in body.get("messages") or []:
        if isinstance(message, dict):
            yield from (block for block in _blocks(message) if "cache_control" in block)
