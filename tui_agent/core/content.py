"""Typed message content: the `anthropic` SDK's block and message TypedDicts, and JSON values as a recursive type.

The SDK's types are imported for the type checker only (TypedDicts are plain dicts at runtime, and the SDK takes
seconds to import), so their aliases below are strings at runtime: use them in annotations and `cast`, not `isinstance`.
JsonValue is a real alias (pydantic decodes events that hold one).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, TypeAlias, TypedDict, cast

from typing_extensions import TypeAliasType

if TYPE_CHECKING:
    from anthropic.types import (CacheControlEphemeralParam, ContentBlockParam, DocumentBlockParam, ImageBlockParam,
                                 TextBlockParam, ToolResultBlockParam, ToolUseBlockParam, WebSearchToolResultBlockParam)

JsonValue = TypeAliasType("JsonValue", "str | int | float | bool | None | list[JsonValue] | dict[str, JsonValue]")
JsonObject: TypeAlias = dict[str, JsonValue]
"""A JSON object as `json.loads` gives it (a tool's arguments, a JSON schema, a line of a JSON protocol)."""
JsonSchema: TypeAlias = JsonObject
"""A JSON Schema document (a tool's input or output schema, an MCP elicitation's requested schema)."""

ContentBlock: TypeAlias = "ContentBlockParam"
"""Any block of a message's content (text, image, thinking, tool_use, tool_result, server tool blocks, ...)."""
TextBlock: TypeAlias = "TextBlockParam"
ImageBlock: TypeAlias = "ImageBlockParam"
ToolUseBlock: TypeAlias = "ToolUseBlockParam"
ToolResultBlock: TypeAlias = "ToolResultBlockParam"
WebSearchResultBlock: TypeAlias = "WebSearchToolResultBlockParam"
ResultPart: TypeAlias = "TextBlockParam | ImageBlockParam | DocumentBlockParam"
"""A block a tool gives back inside its tool_result (beside its text): an image, a PDF document, or more text."""

ToolDefinition: TypeAlias = JsonObject
"""A tool as the `tools` array of a request lists it: name, description and input_schema (a JSON schema)."""

Role = Literal["user", "assistant"]
MediaType = Literal["image/jpeg", "image/png", "image/gif", "image/webp"]


class ApiMessage(TypedDict):
    """One message of a request: its role and its blocks (a list, so a merged neighbour can extend it)."""

    role: Role
    content: list[ContentBlock]


def text_block(text: str) -> TextBlock:
    return {"type": "text", "text": text}


def json_object(value: object) -> JsonObject:
    """`value` when it is a JSON object (a value read from a hostile or loosely specified JSON document), else {}."""
    return cast(JsonObject, value) if isinstance(value, dict) else {}


def schema_properties(schema: JsonSchema) -> JsonObject:
    """An object schema's `properties` (name -> the property's schema); {} when it has none."""
    return json_object(schema.get("properties"))


def schema_required(schema: JsonSchema) -> list[str]:
    """An object schema's `required` names."""
    required = schema.get("required")
    return [name for name in required if isinstance(name, str)] if isinstance(required, list) else []


def tool_input(block: ToolUseBlock) -> JsonObject:
    """A tool_use block's input: the JSON object its stream carried (streamreply parses it), {} for anything else."""
    return json_object(block.get("input"))


def cache_mark() -> CacheControlEphemeralParam:
    """The cache_control of a prompt-cache breakpoint."""
    return {"type": "ephemeral"}
