"""The API's server-side web search: the tool offered (when the person enabled it and the model has it) and its
reply blocks (`server_tool_use`, `web_search_tool_result`) told as tool call lines. The blocks themselves stay in the
history verbatim: the API reads its own encrypted results back."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, cast

from tui_agent.core.content import ContentBlock, JsonObject, ToolDefinition, WebSearchResultBlock
from tui_agent.core.settings import Settings

SEARCH_TOOL_TYPE = "web_search_20250305"
SEARCH_TOOL_NAME = "web_search"
SERVER_CALL: Final = "server_tool_use"
SEARCH_RESULT: Final = "web_search_tool_result"
WITHOUT_SEARCH = ("claude-3-haiku", "claude-3-opus", "claude-3-sonnet", "claude-3-5-sonnet-20240620", "claude-2",
                  "claude-instant")
"""Claude models the web search tool is not offered to (the API refuses the tool for them)."""
MAX_LISTED = 8


def model_searches(model: str) -> bool:
    """Whether the Messages API runs web search for this model: current Claude models; not older ones, nor a
    non-Claude model behind another server."""
    name = model.lower()
    return name.startswith("claude-") and not name.startswith(WITHOUT_SEARCH)


def search_tool(model: str, settings: Settings) -> ToolDefinition | None:
    """The tool definition the request carries, or None (not enabled, or the model has no web search)."""
    if not settings.web_search or not model_searches(model):
        return None
    return {"type": SEARCH_TOOL_TYPE, "name": SEARCH_TOOL_NAME, "max_uses": settings.web_search_max_uses}


def search_note(model: str, settings: Settings) -> str:
    """What the person is told when they enabled web search and this model cannot use it ("" otherwise)."""
    if settings.web_search and not model_searches(model):
        return f"[web] search is on, but {model} has no server-side web search: it is not offered"
    return ""


@dataclass(frozen=True)
class ServerCall:
    """A search the API ran during a reply, as a tool call line shows it."""

    call_id: str
    name: str
    arguments: JsonObject
    result: str
    is_error: bool


def server_calls(content: Sequence[ContentBlock]) -> list[ServerCall]:
    """Each `server_tool_use` of a reply with what its result block says (the results' titles and URLs)."""
    results = {block["tool_use_id"]: block for block in content if block["type"] == SEARCH_RESULT}
    calls: list[ServerCall] = []
    for block in content:
        if block["type"] != SERVER_CALL:
            continue
        found = results.get(block["id"])
        text, is_error = describe_result(found)
        arguments = block.get("input")  # parsed from JSON (streamreply)
        calls.append(ServerCall(block["id"], block["name"], dict(cast(JsonObject, arguments)) if isinstance(arguments, dict) else {},
                                text, is_error))
    return calls


def describe_result(block: WebSearchResultBlock | None) -> tuple[str, bool]:
    if block is None:
        return "(no result in this reply: the API goes on with it in the next one)", False
    content: object = block.get("content")
    if isinstance(content, dict):  # web_search_tool_result_error
        return f"the search failed: {content.get('error_code', 'unknown error')}", True
    items = [item for item in content if isinstance(item, dict)] if isinstance(content, list) else []
    lines = [f"- {item.get('title') or '(untitled)'} {item.get('url', '')}".rstrip() for item in items[:MAX_LISTED]]
    more = f"\n… and {len(items) - MAX_LISTED} more" if len(items) > MAX_LISTED else ""
    return (f"{len(items)} results\n" + "\n".join(lines) + more) if items else "no results", False
