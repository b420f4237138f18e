"""Typed, immutable events that the core yields to the TUI, the headless CLI and the tests."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from tui_agent.core.content import JsonObject


@dataclass(frozen=True)
class Event:
    """Base class of every core event."""


@dataclass(frozen=True)
class TurnStarted(Event):
    """The agent began working on a user prompt."""

    prompt: str
    session_id: str


@dataclass(frozen=True)
class TextDelta(Event):
    """A chunk of assistant text, streamed."""

    text: str


@dataclass(frozen=True)
class ToolCallStarted(Event):
    """The model asked for a tool call and the runtime is about to run it."""

    call_id: str
    name: str
    arguments: JsonObject
    authored: bool = False


@dataclass(frozen=True)
class ToolCallFinished(Event):
    """A tool call ended; `is_error` tells whether the model got an error result."""

    call_id: str
    name: str
    result: str
    is_error: bool
    duration_ms: float
    authored: bool = False
    truncated: bool = False


@dataclass(frozen=True)
class ApprovalDenied(Event):
    """A call needing approval was refused (by the person, a flag, or the permission mode)."""

    call_id: str
    name: str
    reason: str


@dataclass(frozen=True)
class ToolAuthored(Event):
    """A tool (or recipe) passed the authoring pipeline and is registered."""

    name: str
    kind: Literal["tool", "recipe"]
    source: str
    commit: str | None
    created: bool


@dataclass(frozen=True)
class CatalogChanged(Event):
    """The set of tools or recipes, or one of their statuses, changed (`kind` says which)."""

    names: tuple[str, ...] = ()
    reason: str = ""
    kind: Literal["tool", "recipe"] = "tool"


@dataclass(frozen=True)
class FilesChanged(Event):
    """Project files outside `.agent/` changed on disk (any process); paths are project-relative, POSIX."""

    paths: tuple[str, ...]


@dataclass(frozen=True)
class BranchChanged(Event):
    """The repository's HEAD moved (a checkout, a commit by another process); `branch` as the header shows it."""

    branch: str


@dataclass(frozen=True)
class UsageChanged(Event):
    """`.agent/state.db` was written (call counts, run logs), possibly by another process."""


CHANGE_EVENTS = (ToolAuthored, CatalogChanged, FilesChanged, BranchChanged, UsageChanged)
"""The event types of the project's change stream (`tui_agent.core.changes.ChangeFeed`)."""


@dataclass(frozen=True)
class Notice(Event):
    """Something the person should see that is not assistant text (retries, deferred commits, recipes)."""

    message: str
    level: Literal["info", "warning", "error"] = "info"


@dataclass(frozen=True)
class Usage(Event):
    """Token use and cost of one model request, and the session totals so far."""

    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    cost_usd: float
    session_cost_usd: float
    session_input_tokens: int = 0
    session_output_tokens: int = 0
    session_cache_read_tokens: int = 0
    session_cache_write_tokens: int = 0


@dataclass(frozen=True)
class TurnFinished(Event):
    """The agent finished the prompt; `text` is the final assistant text."""

    text: str
    stop_reason: str = "end_turn"


@dataclass(frozen=True)
class TurnCancelled(Event):
    """The person stopped the turn (Esc, a signal): its calls that had no result yet were stopped.

    The turn cannot yield it (its task is being cancelled): the session records it, and a front end folds it in."""


@dataclass(frozen=True)
class TurnFailed(Event):
    """The turn stopped on an error; the conversation can continue.

    `prompt` is the prompt text when the turn failed before the model answered it: it was taken back out of the
    conversation (it will not be sent again with the next prompt), so a front end can put it back in the input box.
    It is empty when the model had answered part of the turn: then the prompt stays in the conversation."""

    message: str
    kind: str = "error"
    details: dict[str, Any] = field(default_factory=dict)
    prompt: str = ""


@dataclass(frozen=True)
class ThinkingDelta(Event):
    """A piece of the model's extended thinking as it streams (shown folded; never in headless text output)."""

    text: str


@dataclass(frozen=True)
class ToolOutputDelta(Event):
    """Output a running call printed (run_shell's stdout and stderr, as they come); front ends may show it live.

    Only a live view: the session does not record it, and the model gets the call's final result, not these."""

    call_id: str
    text: str


@dataclass(frozen=True)
class PlanEntry:
    """One step of the model's plan (update_plan), as ACP's PlanEntry has it."""

    content: str
    status: Literal["pending", "in_progress", "completed"]
    priority: Literal["high", "medium", "low"] = "medium"


@dataclass(frozen=True)
class PlanUpdated(Event):
    """The model replaced its plan (update_plan): every entry, in order."""

    entries: tuple[PlanEntry, ...]


@dataclass(frozen=True)
class PermissionModeChanged(Event):
    """The session's permission mode changed during a turn (an approved plan leaves plan mode)."""

    mode: str
