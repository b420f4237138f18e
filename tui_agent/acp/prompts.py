"""An ACP prompt's content blocks as the text of a turn: text, resource links and embedded text resources."""

from __future__ import annotations

from typing import Any

from acp import RequestError
from acp.schema import (EmbeddedResourceContentBlock, ResourceContentBlock, TextContentBlock,
                        TextResourceContents)


def prompt_text(blocks: list[Any]) -> str:
    """The blocks joined; an image, audio or binary block (not offered in the capabilities) is a clear error."""
    parts: list[str] = []
    for block in blocks:
        if isinstance(block, TextContentBlock):
            parts.append(block.text)
        elif isinstance(block, ResourceContentBlock):
            parts.append(f"[{block.name}]({block.uri})")
        elif isinstance(block, EmbeddedResourceContentBlock) and isinstance(block.resource, TextResourceContents):
            parts.append(f'<context uri="{block.resource.uri}">\n{block.resource.text}\n</context>')
        else:
            kind = getattr(block, "type", type(block).__name__)
            raise RequestError.invalid_params({"message": f"tuiagent takes text, resource links and embedded text "
                                                          f"resources in a prompt, not {kind} content (see its "
                                                          f"promptCapabilities)"})
    return "\n".join(parts)
