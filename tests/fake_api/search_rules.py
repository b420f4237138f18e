"""The fake Messages API's server-side web search, as the real API runs it: the `web_search_20250305` tool is
checked like the API checks it (name, max_uses, domains, a model that has it); a scripted search is answered only
when the request offers the tool; its blocks (`server_tool_use`, `web_search_tool_result`, citations) carry
encrypted parts the client cannot make, so a block sent back changed, or a result without its call, is refused.
The 400 texts are written in the API's validation style (none was found quoted verbatim)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
from collections.abc import Iterator
from typing import Any

SEARCH_TYPE = "web_search_20250305"
SEARCH_NAME = "web_search"
TOOL_KEYS = {"type", "name", "max_uses", "allowed_domains", "blocked_domains", "user_location", "cache_control",
             "allowed_callers", "defer_loading", "strict"}
WITHOUT_SEARCH = ("claude-3-haiku", "claude-3-opus", "claude-3-sonnet", "claude-3-5-sonnet-20240620")
_SECRET = os.urandom(32)


def _tag(kind: str, value: str) -> str:
    return base64.b64encode(hmac.new(_SECRET, f"{kind}:{value}".encode(), hashlib.sha256).digest()).decode()


def encrypted_content(url: str) -> str:
    return _tag("content", url)


def encrypted_index(url: str, cited: str) -> str:
    return _tag("index", url + "\0" + cited)


def offered(body: dict[str, Any]) -> bool:
    return any(isinstance(tool, dict) and tool.get("type") == SEARCH_TYPE for tool in body.get("tools") or [])


def tool_problems(index: int, tool: dict[str, Any], model: str) -> Iterator[str]:
    where = f"tools.{index}.{SEARCH_TYPE}"
    if tool.get("type") != SEARCH_TYPE:
        yield (f"tools.{index}: Input tag '{tool.get('type')}' found using 'type' does not match any of the expected "
               f"tags: 'custom', '{SEARCH_TYPE}'")
        return
    if tool.get("name") != SEARCH_NAME:
        yield f"{where}.name: Input should be '{SEARCH_NAME}'"
    for key in sorted(set(tool) - TOOL_KEYS):
        yield f"{where}.{key}: Extra inputs are not permitted"
    uses = tool.get("max_uses")
    if uses is not None and (isinstance(uses, bool) or not isinstance(uses, int) or uses < 1):
        yield f"{where}.max_uses: Input should be greater than or equal to 1"
    if tool.get("allowed_domains") and tool.get("blocked_domains"):
        yield f"{where}: cannot specify both allowed_domains and blocked_domains"
    if model.lower().startswith(WITHOUT_SEARCH):
        yield f"'{model}' does not support tool types: {SEARCH_TYPE}"


def block_problems(blocks: list[dict[str, Any]], where: str, role: Any) -> Iterator[str]:
    """A search's blocks in a message sent back: in an assistant message, each result after its call, unchanged."""
    calls: set[Any] = set()
    for position, block in enumerate(blocks):
        kind, at = block.get("type"), f"{where}.{position}"
        if kind in ("server_tool_use", "web_search_tool_result") and role != "assistant":
            yield f"{at}: `{kind}` blocks are only allowed in assistant messages"
        elif kind == "server_tool_use":
            if not str(block.get("id", "")).startswith("srvtoolu_") or block.get("name") != SEARCH_NAME \
                    or not isinstance(block.get("input"), dict):
                yield f"{at}.server_tool_use: Input should be a valid server tool use block"
            calls.add(block.get("id"))
        elif kind == "web_search_tool_result":
            if block.get("tool_use_id") not in calls:
                yield (f"{at}: `web_search_tool_result` block(s) provided without a preceding `server_tool_use` block "
                       f"with id {block.get('tool_use_id')}")
            yield from _result_problems(block.get("content"), f"{at}.web_search_tool_result.content")
        elif kind == "text":
            yield from _citation_problems(block.get("citations"), f"{at}.text.citations")


def _result_problems(content: Any, where: str) -> Iterator[str]:
    if isinstance(content, dict):
        if content.get("type") != "web_search_tool_result_error":
            yield f"{where}: Input should be a valid list"
        return
    for index, item in enumerate(content if isinstance(content, list) else [None]):
        if not isinstance(item, dict) or item.get("type") != "web_search_result":
            yield f"{where}.{index}: Input should be a valid web search result"
        elif not hmac.compare_digest(str(item.get("encrypted_content", "")), encrypted_content(str(item.get("url")))):
            yield f"{where}.{index}.encrypted_content: Invalid encrypted content"


def _citation_problems(citations: Any, where: str) -> Iterator[str]:
    for index, citation in enumerate(citations or []):
        if not isinstance(citation, dict) or citation.get("type") != "web_search_result_location":
            continue
        expected = encrypted_index(str(citation.get("url")), str(citation.get("cited_text")))
        if not hmac.compare_digest(str(citation.get("encrypted_index", "")), expected):
            yield f"{where}.{index}.encrypted_index: Invalid encrypted index"


def result_content(results: tuple[tuple[str, str], ...]) -> list[dict[str, Any]]:
    """(title, url) pairs as the result block's content."""
    return [{"type": "web_search_result", "url": url, "title": title, "encrypted_content": encrypted_content(url),
             "page_age": "April 1, 2026"} for title, url in results]


def citation(url: str, title: str, cited: str) -> dict[str, Any]:
    return {"type": "web_search_result_location", "url": url, "title": title, "cited_text": cited,
            "encrypted_index": encrypted_index(url, cited)}
