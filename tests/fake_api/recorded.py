"""One request the fake server received, with helpers to read its messages, tools and tool results."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RecordedRequest:
    """One request the server received: path, headers (lower-cased names) and the parsed JSON body."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The messages as sent, without their `cache_control` marks (read those in `body`)."""
        return [_unmarked(message) for message in self.body.get("messages", [])]

    @property
    def breakpoints(self) -> int:
        """How many blocks (tools, system, messages) carry cache_control."""
        marked = [tool for tool in self.tools if "cache_control" in tool]
        system = self.body.get("system")
        marked += [block for block in system if "cache_control" in block] if isinstance(system, list) else []
        for message in self.body.get("messages", []):
            content = message.get("content")
            marked += [block for block in content if "cache_control" in block] if isinstance(content, list) else []
        return len(marked)

    @property
    def tools(self) -> list[dict[str, Any]]:
        return list(self.body.get("tools", []))

    @property
    def tool_names(self) -> list[str]:
        return [tool.get("name", "") for tool in self.tools]

    def tool(self, name: str) -> dict[str, Any] | None:
        return next((tool for tool in self.tools if tool.get("name") == name), None)

    @property
    def system_text(self) -> str:
        system = self.body.get("system", "")
        if isinstance(system, str):
            return system
        return "\n".join(block.get("text", "") for block in system)

    @property
    def api_key(self) -> str | None:
        auth = self.headers.get("authorization", "")
        if auth.lower().startswith("bearer "):
            return auth[7:]
        return self.headers.get("x-api-key")

    def all_text(self) -> str:
        """Every text block of every message (string contents too), joined by newlines."""
        parts: list[str] = []
        for message in self.messages:
            content = message.get("content")
            if isinstance(content, str):
                parts.append(content)
                continue
            parts.extend(block.get("text", "") for block in content if block.get("type") == "text")
        return "\n".join(parts)

    def last_user_text(self) -> str:
        """The text of the last user message (string content or its text blocks)."""
        for message in reversed(self.messages):
            if message.get("role") != "user":
                continue
            content = message.get("content")
            if isinstance(content, str):
                return content
            texts = [block.get("text", "") for block in content if block.get("type") == "text"]
            if texts:
                return "\n".join(texts)
        return ""

    def tool_results(self) -> list[dict[str, Any]]:
        """The tool_result blocks of the last message (when it is a user message answering tool calls)."""
        if not self.messages:
            return []
        last = self.messages[-1]
        content = last.get("content")
        if last.get("role") != "user" or isinstance(content, str):
            return []
        return [block for block in content if block.get("type") == "tool_result"]

    def tool_result_text(self, index: int = 0) -> str:
        result = self.tool_results()[index]
        content = result.get("content", "")
        if isinstance(content, str):
            return content
        return "\n".join(block.get("text", "") for block in content if block.get("type") == "text")


def _unmarked(message: dict[str, Any]) -> dict[str, Any]:
    content = message.get("content")
    if not isinstance(content, list):
        return dict(message)
    return {**message, "content": [{k: v for k, v in block.items() if k != "cache_control"} for block in content]}
