"""Scripted responses of the fake Messages API: text and tool_use blocks, replies, HTTP errors, broken streams."""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from typing import Any

_ids = itertools.count(1)

ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


def next_id(prefix: str) -> str:
    return f"{prefix}_{next(_ids):06d}"


@dataclass(frozen=True)
class Block:
    """One content block of a scripted assistant message; `raw_input` streams that exact JSON text instead of `input`."""

    kind: str  # "text" | "tool_use" | "thinking" (text is the thinking) | "redacted_thinking" (text seeds the data)
    # | "server_tool_use" (a web search: input {"query"}) | "web_search_tool_result" (id: its call's, results)
    text: str = ""
    name: str = ""
    input: dict[str, Any] = field(default_factory=dict)
    id: str = ""
    raw_input: str | None = None
    results: tuple[tuple[str, str], ...] = ()  # a web search's (title, url) results
    citations: tuple[dict[str, Any], ...] = ()  # a text block's citations of search results

    @property
    def input_json(self) -> str:
        return self.raw_input if self.raw_input is not None else json.dumps(self.input)


@dataclass(frozen=True)
class Reply:
    """A scripted assistant message."""

    blocks: tuple[Block, ...]
    stop_reason: str | None = None
    usage: dict[str, int] | None = None
    delay_s: float = 0.0


@dataclass(frozen=True)
class HttpError:
    """A scripted HTTP error status."""

    status: int
    error_type: str
    message: str
    headers: dict[str, str]


@dataclass(frozen=True)
class MidStreamError:
    """A 200 SSE stream that sends some blocks and then an `event: error` frame."""

    blocks_before: tuple[Block, ...]
    error_type: str
    message: str


@dataclass(frozen=True)
class CutStream:
    """A 200 SSE stream that ends (the connection closes) before `message_stop`, `cut_chars` characters into its last block."""

    blocks: tuple[Block, ...]
    cut_chars: int | None = None  # None: every block is complete, only message_delta/message_stop are missing


Response = Reply | HttpError | MidStreamError | CutStream


def text(value: str) -> Block:
    return Block(kind="text", text=value)


def thinking(value: str) -> Block:
    """A thinking block: sent (signed) only when the request enables thinking, as the real API does."""
    return Block(kind="thinking", text=value)


def redacted_thinking(seed: str = "redacted") -> Block:
    return Block(kind="redacted_thinking", text=seed)


def tool_use(name: str, input: dict[str, Any] | None = None, id: str | None = None) -> Block:
    return Block(kind="tool_use", name=name, input=dict(input or {}), id=id or next_id("toolu"))


def tool_use_raw(name: str, raw_json: str, id: str | None = None) -> Block:
    """A tool call whose streamed input is exactly `raw_json` (which may be invalid JSON)."""
    return Block(kind="tool_use", name=name, id=id or next_id("toolu"), raw_input=raw_json)


def web_search(query: str, *results: tuple[str, str], id: str | None = None) -> tuple[Block, Block]:
    """A search the API runs during a reply: its `server_tool_use` and its `web_search_tool_result` ((title, url)
    pairs); sent only when the request offers the web_search tool, as the real API does."""
    call_id = id or next_id("srvtoolu")
    return (Block(kind="server_tool_use", name="web_search", input={"query": query}, id=call_id),
            Block(kind="web_search_tool_result", id=call_id, results=tuple(results)))


def cited_text(value: str, url: str, title: str, cited: str) -> Block:
    """A text block citing a search result (its encrypted index made by the server)."""
    from tests.fake_api.search_rules import citation

    return Block(kind="text", text=value, citations=(citation(url, title, cited),))


SEARCH_KINDS = ("server_tool_use", "web_search_tool_result")


def reply(*blocks: Block, stop_reason: str | None = None, usage: dict[str, int] | None = None, delay_s: float = 0.0) -> Reply:
    if stop_reason is None:
        stop_reason = "tool_use" if any(b.kind == "tool_use" for b in blocks) else "end_turn"
    return Reply(blocks=tuple(blocks), stop_reason=stop_reason, usage=usage, delay_s=delay_s)


def http_error(status: int, error_type: str | None = None, message: str | None = None, headers: dict[str, str] | None = None) -> HttpError:
    default_headers = {"retry-after-ms": "1"} if status in (408, 409, 429) or status >= 500 else {}
    return HttpError(
        status=status,
        error_type=error_type or ERROR_TYPES.get(status, "api_error"),
        message=message or f"scripted {status}",
        headers={**default_headers, **(headers or {})},
    )


def mid_stream_error(*blocks_before: Block, error_type: str = "overloaded_error", message: str = "Overloaded") -> MidStreamError:
    return MidStreamError(blocks_before=tuple(blocks_before), error_type=error_type, message=message)


def cut_stream(*blocks: Block, cut_chars: int | None = None) -> CutStream:
    return CutStream(blocks=tuple(blocks), cut_chars=cut_chars)


def response_from_json(item: dict[str, Any]) -> Response:
    """Build one scripted response from its JSON form (see tests/fake_messages_api.py)."""
    if "status" in item:
        return http_error(int(item["status"]), item.get("error_type"), item.get("message"), item.get("headers"))
    blocks: list[Block] = []
    if "text" in item:
        blocks.append(text(str(item["text"])))
    for block in item.get("content", []):
        if block.get("type") == "tool_use":
            blocks.append(tool_use(block["name"], block.get("input", {}), block.get("id")))
        elif block.get("type") == "thinking":
            blocks.append(thinking(block.get("thinking", "")))
        elif block.get("type") == "redacted_thinking":
            blocks.append(redacted_thinking(block.get("data", "redacted")))
        else:
            blocks.append(text(block.get("text", "")))
    if "mid_stream_error" in item:
        return mid_stream_error(*blocks, error_type=str(item["mid_stream_error"]))
    if "cut_stream" in item:
        return cut_stream(*blocks, cut_chars=item.get("cut_chars"))
    return reply(*blocks, stop_reason=item.get("stop_reason"), usage=item.get("usage"), delay_s=float(item.get("delay_s", 0.0)))


def load_script(items: list[dict[str, Any]]) -> tuple[list[Response], Response | None]:
    """The queue of responses and the optional response repeated once the queue is empty."""
    responses: list[Response] = []
    repeat: Response | None = None
    for item in items:
        if "repeat" in item:
            repeat = response_from_json(item["repeat"])
        else:
            responses.append(response_from_json(item))
    return responses, repeat
