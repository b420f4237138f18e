"""Encoding scripted assistant blocks as Messages API SSE frames and JSON content."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from tests.fake_api.script import Block
from tests.fake_api.thinking_rules import redacted_data, sign
from tests.fake_api.search_rules import result_content


def sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def _chunks(value: str, size: int) -> Iterator[str]:
    for start in range(0, len(value), size):
        yield value[start : start + size]


def block_events(index: int, block: Block, cut_chars: int | None = None) -> Iterator[bytes]:
    """The frames of one block; with `cut_chars`, only that many characters of its text/input and no stop frame."""
    if block.kind == "thinking":
        yield sse("content_block_start", {"type": "content_block_start", "index": index,
                                          "content_block": {"type": "thinking", "thinking": "", "signature": ""}})
        body = block.text if cut_chars is None else block.text[:cut_chars]
        for piece in _chunks(body, 12):
            yield sse("content_block_delta", {"type": "content_block_delta", "index": index, "delta": {"type": "thinking_delta", "thinking": piece}})
        if cut_chars is None:
            yield sse("content_block_delta", {"type": "content_block_delta", "index": index,
                                              "delta": {"type": "signature_delta", "signature": sign(block.text)}})
    elif block.kind == "redacted_thinking":
        yield sse("content_block_start", {"type": "content_block_start", "index": index,
                                          "content_block": {"type": "redacted_thinking", "data": redacted_data(block.text)}})
    elif block.kind == "web_search_tool_result":  # complete in its start frame, as the API sends it
        yield sse("content_block_start", {"type": "content_block_start", "index": index, "content_block": block_json(block)})
    elif block.kind == "text":
        yield sse("content_block_start", {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}})
        for citation in block.citations:
            yield sse("content_block_delta", {"type": "content_block_delta", "index": index,
                                              "delta": {"type": "citations_delta", "citation": citation}})
        body = block.text if cut_chars is None else block.text[:cut_chars]
        for piece in _chunks(body, 12) if body else [""]:
            yield sse("content_block_delta", {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": piece}})
    else:
        start = {"type": block.kind, "id": block.id, "name": block.name, "input": {}}  # tool_use, server_tool_use
        yield sse("content_block_start", {"type": "content_block_start", "index": index, "content_block": start})
        yield sse("content_block_delta", {"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": ""}})
        body = block.input_json if cut_chars is None else block.input_json[:cut_chars]
        for piece in _chunks(body, 16):
            yield sse("content_block_delta", {"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": piece}})
    if cut_chars is None:
        yield sse("content_block_stop", {"type": "content_block_stop", "index": index})


def block_json(block: Block) -> dict[str, Any]:
    if block.kind == "thinking":
        return {"type": "thinking", "thinking": block.text, "signature": sign(block.text)}
    if block.kind == "redacted_thinking":
        return {"type": "redacted_thinking", "data": redacted_data(block.text)}
    if block.kind == "text":
        return {"type": "text", "text": block.text, **({"citations": list(block.citations)} if block.citations else {})}
    if block.kind == "web_search_tool_result":
        return {"type": "web_search_tool_result", "tool_use_id": block.id, "content": result_content(block.results)}
    return {"type": block.kind, "id": block.id, "name": block.name, "input": block.input}


def output_tokens(blocks: tuple[Block, ...]) -> int:
    return max(1, sum(len(b.text) + len(b.input_json) for b in blocks) // 4)
