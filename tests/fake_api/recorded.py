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
        return list(self.body.get("messages", []))

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
