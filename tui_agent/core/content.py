"""Typed message content: the `anthropic` SDK's block and message TypedDicts, and JSON values as a recursive type.

The SDK's types are imported for the type checker only (TypedDicts are plain dicts at runtime, and the SDK takes
seconds to import), so the aliases below are strings at runtime: use them in annotations and `cast`, not `isinstance`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, TypeAlias, TypedDict

if TYPE_CHECKING:
    from anthropic.types import (CacheControlEphemeralParam, ContentBlockParam, DocumentBlockParam, ImageBlockParam, RedactedThinkingBlockParam, TextBlockParam,
                                 ThinkingBlockParam, ToolResultBlockParam, ToolUseBlockParam,
                                 WebSearchToolResultBlockParam)

JsonValue: TypeAlias = "str | int | float | bool | None | list[JsonValue] | dict[str, JsonValue]"
JsonObject: TypeAlias = "dict[str, JsonValue]"
"""A JSON object as `json.loads` gives it (a tool's arguments, a JSON schema, a line of a JSON protocol)."""

ContentBlock: TypeAlias = "ContentBlockParam"
"""Any block of a message's content (text, image, thinking, tool_use, tool_result, server tool blocks, ...)."""
TextBlock: TypeAlias = "TextBlockParam"
ImageBlock: TypeAlias = "ImageBlockParam"
DocumentBlock: TypeAlias = "DocumentBlockParam"
ToolUseBlock: TypeAlias = "ToolUseBlockParam"
ToolResultBlock: TypeAlias = "ToolResultBlockParam"
WebSearchResultBlock: TypeAlias = "WebSearchToolResultBlockParam"
ThinkingBlock: TypeAlias = "ThinkingBlockParam | RedactedThinkingBlockParam"
ResultPart: TypeAlias = "TextBlockParam | ImageBlockParam | DocumentBlockParam"
"""A block a tool gives back inside its tool_result (beside its text): an image, a PDF document, or more text."""

ToolDefinition: TypeAlias = "JsonObject"
"""A tool as the `tools` array of a request lists it: name, description and input_schema (a JSON schema)."""

Role = Literal["user", "assistant"]
MediaType = Literal["image/jpeg", "image/png", "image/gif", "image/webp"]


class ApiMessage(TypedDict):
    """One message of a request: its role and its blocks (a list, so a merged neighbour can extend it)."""

    role: Role
    content: list[ContentBlock]


def text_block(text: str) -> TextBlock:
    return {"type": "text", "text": text}


def cache_mark() -> CacheControlEphemeralParam:
    """The cache_control of a prompt-cache breakpoint."""
    return {"type": "ephemeral"}
