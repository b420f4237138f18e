"""Claude Code's prompt and tool flags applied to an agent: --system-prompt, --append-system-prompt, --disallowedTools."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from tui_agent.core.agent.system_prompt import INSTRUCTIONS, CatalogEntry
from tui_agent.core.agent.frozen_prefix import PromptPlan
from tui_agent.core.agent.providers import ToolProvider
from tui_agent.core.agent.toolbase import BuiltinTool, ToolContext, ToolFailure, ToolOutput
from tui_agent.core.events import Event
from tui_agent.core.content import JsonObject, ToolDefinition

if TYPE_CHECKING:
    from tui_agent.core.agent.loop import Agent


class ShapedPlan(PromptPlan):
    """The agent's prompt plan with the caller's system prompt (replacing tuiagent's instructions; the catalog index
    and what follows stay), text appended to it, and hidden tools left out of the tools array."""

    def __init__(self, *, system_prompt: str | None, append: str, hidden: frozenset[str]) -> None:
        super().__init__()
        self.system_prompt = system_prompt
        self.append = append
        self.hidden = hidden

    def freeze(self, **kwargs: Any) -> None:
        super().freeze(**kwargs)
        assert self.system is not None
        text = str(self.system[0]["text"])
        if self.system_prompt:
            ours = INSTRUCTIONS.format(root=kwargs.get("root", ""), mode=kwargs.get("mode", ""))
            text = self.system_prompt + "\n\n" + (text[len(ours):].lstrip("\n") if text.startswith(ours) else "")
        if self.append:
            text = text.rstrip("\n") + "\n\n" + self.append
        self.system[0] = {**self.system[0], "text": text}

    def tools(self, builtins: Mapping[str, BuiltinTool], entries: Sequence[CatalogEntry],
              authored: Sequence[str]) -> list[ToolDefinition]:
        tools = super().tools(builtins, entries, authored)
        marker = next((tool.pop("cache_control") for tool in tools if "cache_control" in tool), None)
        kept = [tool for tool in tools if tool["name"] not in self.hidden]
        if kept and marker is not None:
            kept[-1]["cache_control"] = marker
        return kept


class HidingProvider:
    """A tool provider (e.g. the MCP servers') without the hidden tools: not offered, and refused if called."""

    def __init__(self, inner: ToolProvider, hidden: frozenset[str]) -> None:
        self.inner = inner
        self.hidden = hidden

    async def prepare(self) -> list[Event]:
        return await self.inner.prepare()

    def definitions(self) -> list[ToolDefinition]:
        return [definition for definition in self.inner.definitions() if definition.get("name") not in self.hidden]

    def handles(self, name: str) -> bool:
        return self.inner.handles(name)

    async def call(self, context: ToolContext, name: str, arguments: JsonObject) -> ToolOutput:
        if name in self.hidden:
            raise ToolFailure(f"the tool {name} is disallowed in this run (--disallowedTools)")
        return await self.inner.call(context, name, arguments)


def shape(agent: Agent, *, system_prompt: str | None, append: str, hidden: frozenset[str]) -> None:
    """Apply the flags to a fresh agent (before its first request). Hidden built-ins are removed outright; hidden
    catalog tools are left out of the tools array (call_tool and run_python can still reach them)."""
    if not (system_prompt or append or hidden):
        return
    agent.plan = ShapedPlan(system_prompt=system_prompt, append=append, hidden=hidden)
    for name in hidden & set(agent.builtins):
        del agent.builtins[name]
    agent.tool_providers = [HidingProvider(provider, hidden) for provider in agent.tool_providers]
