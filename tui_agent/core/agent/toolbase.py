"""What a built-in tool is: its API definition, its handler, the context it runs with, and output trimming."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tui_agent.core.agent.permissions import ApprovalRequest, Permissions
from tui_agent.core.content import JsonObject, JsonSchema, JsonValue, ResultPart, ToolDefinition
from tui_agent.core.errors import TuiAgentError
from tui_agent.core.events import ApprovalDenied, Event, Notice
from tui_agent.core.project import Project
from tui_agent.core.protocols import AgentCatalog, AgentRecipes, AgentSandbox

if TYPE_CHECKING:
    from tui_agent.core.sandbox import RunResult

MAX_RESULT_CHARS = 30_000


class ToolFailure(TuiAgentError):
    """A tool call failed in an expected way; the message goes to the model as an is_error result."""


@dataclass(frozen=True)
class ToolOutput:
    """What a tool call returns to the model."""

    text: str
    is_error: bool = False
    truncated: bool = False
    blocks: tuple[ResultPart, ...] = ()
    """Content blocks sent after the text (images from an MCP server), as the Messages API takes them."""


@dataclass
class ToolContext:
    """Everything a built-in tool may use; `events` collects extra events for the loop to yield after the call,
    `live` (when the caller shows them) takes events to show while the call still runs (ToolOutputDelta)."""

    project: Project
    permissions: Permissions
    sandbox: AgentSandbox | None = None
    catalog: AgentCatalog | None = None
    recipes: AgentRecipes | None = None
    call_id: str = ""
    tool_name: str = ""
    events: list[Event] = field(default_factory=list)
    live: Callable[[Event], None] | None = None
    approval_wait_s: float = 0.0
    """How long this call waited for the person's answers (its duration leaves that out)."""
    batched: Callable[[str, dict[str, Any]], Awaitable[RunResult] | None] | None = None
    """For a catalog call of a reply's batch (replybatch.py): (tool, checked arguments) → its result from the
    batch's one sandboxed run, or None when the call runs on its own."""

    async def require_approval(self, request: ApprovalRequest) -> bool:
        """Raise ToolFailure (and record ApprovalDenied) unless the permission mode or the person allows it;
        True when the person was asked (and said yes), False when the mode or a rule allowed it."""
        asked_at = time.perf_counter()
        decision = await self.permissions.check(request)
        if decision.asked:
            self.approval_wait_s += time.perf_counter() - asked_at
        if not decision.allowed:
            self.events.append(ApprovalDenied(self.call_id, self.tool_name, decision.reason))
            raise ToolFailure(decision.reason)
        if decision.note:
            self.events.append(Notice(decision.note))
        return decision.asked


Handler = Callable[[ToolContext, JsonObject], Awaitable[ToolOutput | str]]


@dataclass(frozen=True)
class BuiltinTool:
    """A built-in tool: the name and input schema the model sees, and the coroutine that runs it."""

    name: str
    description: str
    input_schema: JsonSchema
    handler: Handler

    def to_api(self) -> ToolDefinition:
        return {"name": self.name, "description": self.description, "input_schema": self.input_schema}


def schema(properties: dict[str, JsonObject], required: list[str]) -> JsonObject:
    return {"type": "object", "properties": dict(properties), "required": list[JsonValue](required), "additionalProperties": False}


def truncate(text: str, limit: int = MAX_RESULT_CHARS) -> tuple[str, bool]:
    """Keep the head and tail of a long output, with a note saying how much was cut."""
    if len(text) <= limit:
        return text, False
    head = text[: limit * 2 // 3]
    tail = text[-(limit // 3) :]
    cut = len(text) - len(head) - len(tail)
    return f"{head}\n\n[... {cut} characters cut to keep the result short ...]\n\n{tail}", True


def require_str(args: JsonObject, key: str, *, allow_empty: bool = False) -> str:
    value = args.get(key)
    if not isinstance(value, str):
        raise ToolFailure(f"`{key}` is required and must be a string")
    if not allow_empty and not value:
        raise ToolFailure(f"`{key}` must not be empty")
    return value


def optional_int(args: JsonObject, key: str, default: int | None) -> int | None:
    value = args.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or int(value) != value:
        raise ToolFailure(f"`{key}` must be an integer")
    return int(value)
