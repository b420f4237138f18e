"""Extra tool providers for the agent loop (e.g. MCP servers): definitions appended to `tools`, refresh, calls."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Protocol

from tui_agent.core.agent.toolbase import ToolContext, ToolOutput
from tui_agent.core.events import Event
from tui_agent.core.content import JsonObject, ToolDefinition


class ToolProvider(Protocol):
    """Tools the loop offers next to the built-ins and the catalog; names never collide with theirs."""

    async def prepare(self) -> list[Event]:
        """Before each model request: pick up changes (e.g. tools/list_changed); events to show."""
        ...

    def definitions(self) -> list[ToolDefinition]:
        """The tool definitions as the Messages API takes them."""
        ...

    def handles(self, name: str) -> bool: ...

    async def call(self, context: ToolContext, name: str, arguments: JsonObject) -> ToolOutput: ...


def with_provided_tools(tools: list[ToolDefinition], providers: Sequence[ToolProvider]) -> list[ToolDefinition]:
    """`tools` then every provider's definitions, with the cache breakpoint moved to the last one."""
    provided = [copy.deepcopy(definition) for provider in providers for definition in provider.definitions()]
    if not provided:
        return tools
    marker = next((tool.pop("cache_control") for tool in tools if "cache_control" in tool), None)
    combined = [*tools, *provided]
    if marker is not None:
        combined[-1]["cache_control"] = marker
    return combined
