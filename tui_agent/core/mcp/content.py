"""An MCP tool result as the model takes it: text, plus images (and PDFs) as real content blocks, not placeholders."""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any, cast

import mcp_types as types

from tui_agent.core.content import MediaType, ResultPart
from tui_agent.core.mcp.models import CallOutcome

IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
"""What the Messages API takes as an image block."""
MAX_BLOCK_BYTES = 5 * 1024 * 1024
"""The API's per-image limit; a larger one is described in text instead."""


def media_block(mime: str, data: str) -> ResultPart | None:
    """An API image (or PDF document) block for base64 `data`, or None when the API would not take it."""
    if mime not in IMAGE_TYPES and mime != "application/pdf":
        return None
    try:
        size = len(base64.b64decode(data, validate=True))
    except (binascii.Error, ValueError):
        return None
    if size > MAX_BLOCK_BYTES:
        return None
    if mime == "application/pdf":
        return {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": data}}
    return {"type": "image", "source": {"type": "base64", "media_type": cast(MediaType, mime), "data": data}}


def _resource(resource: types.TextResourceContents | types.BlobResourceContents) -> tuple[str, ResultPart | None]:
    mime = resource.mime_type or "application/octet-stream"
    if isinstance(resource, types.TextResourceContents):
        return f"[resource {resource.uri} ({mime})]\n{resource.text}", None
    block = media_block(mime, resource.blob)
    if block is not None:
        return f"[resource {resource.uri} ({mime}): attached]", block
    return f"[resource {resource.uri}: {mime}, {len(resource.blob) * 3 // 4} bytes, not shown to the model]", None


def _block(block: Any) -> tuple[str, ResultPart | None]:
    """The text part and the attached block (or None) of one content item."""
    if isinstance(block, types.TextContent):
        return block.text, None
    if isinstance(block, types.ImageContent):
        attached = media_block(block.mime_type, block.data)
        return (f"[image {block.mime_type}: attached]", attached) if attached else (
            f"[image {block.mime_type}: not shown (the model takes jpeg, png, gif and webp up to 5 MB)]", None)
    if isinstance(block, types.EmbeddedResource):
        return _resource(block.resource)
    if isinstance(block, types.ResourceLink):
        return f"[resource link {block.uri}" + (f" ({block.mime_type})" if block.mime_type else "") + \
            (f": {block.description}" if block.description else "") + "]", None
    kind = getattr(block, "type", type(block).__name__)
    return f"[{kind} content: {getattr(block, 'mime_type', None) or 'not shown'}]", None


def outcome_of(result: types.CallToolResult) -> CallOutcome:
    """Text for the model and the person, attached image/document blocks, and the value run_python gets."""
    parts: list[str] = []
    blocks: list[ResultPart] = []
    for item in result.content:
        text, attached = _block(item)
        parts.append(text)
        if attached is not None:
            blocks.append(attached)
    text = "\n".join(parts)
    value: Any = result.structured_content
    if value is None:
        try:
            value = json.loads(text)
        except ValueError:
            value = text
    return CallOutcome(text or "(empty result)", value, bool(result.is_error), tuple(blocks))
