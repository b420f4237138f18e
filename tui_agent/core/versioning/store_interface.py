"""The one interface of a versioned store (tools, recipes): its verbs, the `Change` they return and the `StoreItem` it lists."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any, Literal, Protocol

from tui_agent.core.versioning.gitqueries import HistoryEntry

Kind = Literal["tool", "recipe"]
RowKind = Literal["tool", "recipe", "mcp", "suggestion"]
"""mcp: a configured MCP server or one of its tools; suggestion: a repeated call chain (listed, not versioned)."""


@dataclass(frozen=True)
class Change:
    """What one store operation did: which item, the verb, and the commit it made (or why it was deferred).

    `committed` is False with no `deferred_reason` when there was nothing to commit; `message` is git's outcome
    for people; `record` is the item's record after the change (a ToolRecord or RecipeRecord, None after a prune)."""

    kind: Kind
    name: str
    verb: str  # "add", "update", "revert", "prune", "restore"
    committed: bool
    commit: str | None
    deferred_reason: str | None
    message: str
    created: bool = False
    record: Any = None

    @property
    def note(self) -> str:
        """A short suffix for a status line: empty when committed, else why not."""
        if self.deferred_reason:
            return f" (commit deferred: {self.deferred_reason})"
        return "" if self.committed else f" (not committed: {self.message})"

    def to_dict(self) -> dict[str, Any]:
        data = {key: value for key, value in asdict(self).items() if key != "record"}
        data["record"] = self.record.to_dict() if self.record is not None else None
        return data


@dataclass(frozen=True)
class StoreItem:
    """One tool or recipe as a list shows it (the TUI's catalog pane, `tools list`): status, summary, usage."""

    name: str
    kind: RowKind
    status: str
    calls: int
    last_used: float | None
    summary: str
    failures: int = 0
    mean_ms: float | None = None
    error: str = ""
    access: str = "-"  # what a tool may do beyond reading the project: "writes", "network", "writes,network" or "-"

    @property
    def key(self) -> str:
        return f"{self.kind}:{self.name}"


class VersionedStore(Protocol):
    """Tools and recipes alike: every mutation validates, writes atomically and commits under the writer lock;
    failures raise PipelineError (stage, message, line) and leave disk and git as they were."""

    kind: Kind

    def items(self) -> list[StoreItem]: ...
    def source(self, name: str) -> str | None: ...
    async def save(self, name: str, source: str, *, author: str = "agent") -> Change: ...
    async def revert(self, name: str, rev: str | None = None) -> Change: ...
    async def prune(self, name: str) -> Change: ...
    async def restore(self, name: str) -> Change: ...
    def history(self, name: str) -> list[HistoryEntry]: ...
    def diff(self, name: str, rev: str | None = None) -> str: ...
    async def outside_edit(self, names: set[str]) -> list[str]: ...


def as_timestamp(value: Any) -> float | None:
    """A POSIX timestamp from a float, a datetime or an ISO string; None when unknown."""
    if value is None or value == "":
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, datetime):
        return value.timestamp()
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value).timestamp()
        except ValueError:
            return None
    return None


def first_line(text: str | None) -> str:
    return (text or "").strip().splitlines()[0].strip() if (text or "").strip() else ""
