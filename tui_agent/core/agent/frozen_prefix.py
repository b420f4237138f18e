"""A prompt prefix that stays put for the prompt cache: tools and system frozen per conversation, changes sent as notes.

The cache serves a request the longest prefix (tools, then system, then messages) that an earlier request wrote,
so any byte that changes early costs everything after it. Hence:
- the tools array and the system prompt (with the catalog index) are computed once per conversation, when it
  starts; using a tool never reshuffles them (tools outside the top K stay reachable through call_tool);
- a tool authored (or added) during the conversation is appended at the end of the tools array: callable by
  name at once; the request after it reads the old tools from the cache and writes the rest once;
- other catalog changes (a tool added, removed, edited, broken) and permission-mode changes are announced in a
  short note appended to the conversation instead of rewriting the system prompt.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import cast

from tui_agent.core.agent.system_prompt import CatalogEntry, catalog_index, system_blocks
from tui_agent.core.agent.toolbase import BuiltinTool
from tui_agent.core.content import ApiMessage, ContentBlock, TextBlock, ToolDefinition, cache_mark

NO_CATALOG = "The tool catalog is not available in this session."
PLAN_MODE_NOTE = (" Investigate (read, search) without changing anything, then call propose_plan with your plan for "
                  "the user to approve.")
MAX_NOTE_LINES = 20  # a catalog rewritten wholesale (a git pull) is summed up, not listed
API_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")  # the Messages API refuses the whole request otherwise


def sendable(definition: ToolDefinition | None) -> bool:
    """True when the API would accept this tool definition (a bad one would make every request fail)."""
    if not definition or not API_TOOL_NAME.fullmatch(str(definition.get("name", ""))):
        return False
    schema = definition.get("input_schema")
    return isinstance(schema, dict) and schema.get("type") == "object"


@dataclass
class PromptPlan:
    """What the model was told when the conversation started, and what has been announced since."""

    system: list[TextBlock] | None = None
    tool_order: list[str] = field(default_factory=list)  # catalog tools in the tools array, in their fixed order
    known: set[str] = field(default_factory=set)  # catalog tools that existed when the plan was frozen
    told: dict[str, tuple[str, str]] = field(default_factory=dict)  # tool name -> (summary, status) the model knows
    mode: str = ""

    @property
    def frozen(self) -> bool:
        return self.system is not None

    def reset(self) -> None:
        self.system, self.tool_order, self.known, self.told, self.mode = None, [], set(), {}, ""

    def freeze(self, *, root: str, mode: str, ranked: Sequence[CatalogEntry] | None, budget: int, top_k: int,
               builtins: Mapping[str, BuiltinTool], instructions: str = "", environment: str = "") -> None:
        """Fix the system prompt and the tools array from the catalog as it is now (best-ranked tools first);
        `instructions` (AGENTS.md ...) and `environment` are the session's, read once when it started."""
        entries = list(ranked or [])
        index = catalog_index(entries, budget) if ranked is not None else NO_CATALOG
        self.system = system_blocks(root=root, mode=mode, index=index, instructions=instructions, environment=environment)
        callable_entries = [entry for entry in entries if sendable(entry.api) and entry.name not in builtins]
        self.tool_order = sorted(entry.name for entry in callable_entries[:top_k])
        self.told = {entry.name: (entry.summary, entry.status) for entry in entries}
        self.known = {entry.name for entry in entries}
        self.mode = mode

    def tools(self, builtins: Mapping[str, BuiltinTool], entries: Sequence[CatalogEntry], authored: Sequence[str]) -> list[ToolDefinition]:
        """Built-ins, the frozen catalog tools, then tools authored or added since (each with its current definition)."""
        by_name = {entry.name: entry for entry in entries}
        added = sorted(name for name, entry in by_name.items() if name not in self.known and sendable(entry.api))
        for name in [*added, *authored]:
            if name not in self.tool_order and name not in builtins:
                self.tool_order.append(name)
        tools = [tool.to_api() for tool in builtins.values()]
        for name in self.tool_order:
            entry = by_name.get(name)
            if entry is not None and entry.api is not None and sendable(entry.api):
                tools.append(copy.deepcopy(entry.api))
        if tools:
            tools[-1]["cache_control"] = {"type": "ephemeral"}
        return tools

    def changes(self, entries: Sequence[CatalogEntry] | None, mode: str) -> str:
        """A note of what changed since the model was last told (empty when nothing did); the model is now told."""
        lines: list[str] = []
        if entries is not None:
            now = {entry.name: (entry.summary, entry.status) for entry in entries}
            for name in sorted(now.keys() - self.told.keys()):
                lines.append(f"- new tool {name}: {_describe(now[name])}")
            for name in sorted(self.told.keys() - now.keys()):
                lines.append(f"- {name} was removed from the catalog")
            for name in sorted(now.keys() & self.told.keys()):
                if now[name] != self.told[name]:
                    lines.append(f"- {name} changed: {_describe(now[name])}")
            self.told = now
        if len(lines) > MAX_NOTE_LINES:
            lines = lines[:MAX_NOTE_LINES] + [f"- ... and {len(lines) - MAX_NOTE_LINES} more changes: use search_tools to find tools"]
        note = ""
        if lines:
            note = ("[catalog update] The tool catalog changed since the index in the system prompt:\n" + "\n".join(lines)
                    + "\nCall a tool directly if it is in your tools, any other with call_tool {name, args}.")
        if mode != self.mode:
            note = (note + "\n" if note else "") + f"[permission mode] The permission mode is now `{mode}`." + (
                PLAN_MODE_NOTE if mode == "plan" else "")
            self.mode = mode
        return note


def _describe(view: tuple[str, str]) -> str:
    summary, status = view
    flag = f" [{status}]" if status in ("broken", "drifted") else ""
    return (summary or "(no summary)") + flag


def with_breakpoints(messages: list[ApiMessage], previous_end: tuple[int, int] | None) -> tuple[list[ApiMessage], tuple[int, int] | None]:
    """A copy of the messages with cache_control on their last block (the rolling breakpoint, written by this request)
    and on the block where the previous request ended (read even when more than 20 blocks were added since).

    Returns the copy and the position of its last block, to pass as `previous_end` next time."""
    if not messages or not messages[-1]["content"]:
        return messages, previous_end
    marked = list(messages)
    end = (len(messages) - 1, len(messages[-1]["content"]) - 1)
    for index, position in {end, previous_end} - {None}:  # type: ignore[misc]
        if index < len(marked) and position < len(marked[index]["content"]):
            content = list(marked[index]["content"])
            content[position] = cast(ContentBlock, {**content[position], "cache_control": cache_mark()})
            marked[index] = {**marked[index], "content": content}
    return marked, end
