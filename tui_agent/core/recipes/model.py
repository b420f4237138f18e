"""Recipe data: the parsed trigger and action of a recipe file, and its catalog record."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from tui_agent.core.catalog.errors import PipelineError

TriggerKind = Literal["file_changed", "command", "session_start", "tool_authored", "tool_drifted"]
TRIGGER_KINDS: tuple[str, ...] = ("file_changed", "command", "session_start", "tool_authored", "tool_drifted")
RecipeStatus = Literal["ok", "broken", "disabled"]

DEFAULT_DEBOUNCE_MS = 200


@dataclass(frozen=True)
class Trigger:
    """When a recipe fires: `on` is the kind; `paths`/`debounce_ms` only for file_changed."""

    on: TriggerKind
    paths: tuple[str, ...] = ()
    debounce_ms: int = DEFAULT_DEBOUNCE_MS


@dataclass(frozen=True)
class Action:
    """What a recipe does: call `tool` with `args`, or hand `prompt` to the agent as a user turn."""

    tool: str | None = None
    args: dict[str, Any] = field(default_factory=dict)
    prompt: str | None = None

    @property
    def kind(self) -> Literal["tool", "prompt"]:
        return "tool" if self.tool is not None else "prompt"

    def describe(self) -> str:
        if self.tool is not None:
            return f"tool {self.tool}"
        text = (self.prompt or "").strip().splitlines()[0] if (self.prompt or "").strip() else ""
        return f"prompt {text[:60]!r}"


@dataclass(frozen=True)
class Recipe:
    """A valid recipe file, parsed. `order` is (priority, name): lower runs first on a shared event."""

    name: str
    description: str
    enabled: bool
    trigger: Trigger
    action: Action
    requires: tuple[str, ...]
    priority: int
    source_sha: str

    @property
    def order(self) -> tuple[int, str]:
        return (self.priority, self.name)

    @property
    def needed_tools(self) -> tuple[str, ...]:
        """The `requires` list plus the action's own tool, without duplicates."""
        names = list(self.requires)
        if self.action.tool is not None and self.action.tool not in names:
            names.append(self.action.tool)
        return tuple(names)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "enabled": self.enabled,
            "priority": self.priority,
            "requires": list(self.requires),
            "trigger": {"on": self.trigger.on, "paths": list(self.trigger.paths), "debounce_ms": self.trigger.debounce_ms},
            "action": {"tool": self.action.tool, "args": self.action.args, "prompt": self.action.prompt},
        }


@dataclass(frozen=True)
class RecipeRecord:
    """One recipe in the book: its status, the live (last good) recipe, and why it is broken if it is."""

    name: str
    status: RecipeStatus
    recipe: Recipe | None
    error: PipelineError | None = None
    problems: tuple[str, ...] = ()
    commit: str | None = None
    runs: int = 0
    failures: int = 0
    last_run: str | None = None

    @property
    def description(self) -> str:
        return self.recipe.description if self.recipe else ""

    @property
    def runnable(self) -> bool:
        """Whether triggers fire it: a live version exists, it is enabled and its tools are there."""
        return self.recipe is not None and self.recipe.enabled and not self.problems

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": "recipe",
            "status": self.status,
            "description": self.description,
            "trigger": self.recipe.trigger.on if self.recipe else None,
            "action": self.recipe.action.describe() if self.recipe else None,
            "error": self.error.to_dict() if self.error else None,
            "problems": list(self.problems),
            "commit": self.commit,
            "runs": self.runs,
            "failures": self.failures,
            "last_run": self.last_run,
            "recipe": self.recipe.to_dict() if self.recipe else None,
        }


@dataclass(frozen=True)
class RecipeRun:
    """The outcome of one recipe run (also written to the audit log)."""

    recipe: str
    trigger: str
    ok: bool
    summary: str
    duration_ms: float
    action: str
    detail: dict[str, Any] = field(default_factory=dict)
