"""ToolVersions: the catalog as a `VersionedStore` (the verbs every front end uses for tools and recipes alike)."""

from __future__ import annotations

from typing import Literal

from tui_agent.core.catalog.api import Catalog
from tui_agent.core.catalog.models import ToolRecord, ToolSpec
from tui_agent.core.versioning.gitqueries import HistoryEntry
from tui_agent.core.versioning.store import Change, StoreItem, as_timestamp, first_line


def tool_access(spec: ToolSpec | None) -> str:
    """The ACCESS column: `writes` (WRITES = True), `network` (NETWORK = True), both, or `-`."""
    declared = (("writes", spec.writes), ("network", spec.network)) if spec is not None else ()
    flags = [flag for flag, on in declared if on]
    return ",".join(flags) or "-"


def tool_item(record: ToolRecord) -> StoreItem:
    """A tool's list entry: the first line of its description (or its error), status, usage, access."""
    spec, error = record.spec, record.error
    summary = first_line(spec.description) if spec is not None else ""
    error_text = f"{error.stage}: {error.message}" + (f" (line {error.line})" if error.line else "") if error is not None else ""
    return StoreItem(name=record.name, kind="tool", status=record.status, calls=record.calls,
                     last_used=as_timestamp(record.last_used), summary=error_text or summary, failures=record.failures,
                     mean_ms=record.mean_ms, error=error_text, access=tool_access(spec))


class ToolVersions:
    """Each verb runs the catalog's pipeline (validate → atomic write → commit → register) under the writer lock."""

    kind: Literal["tool", "recipe"] = "tool"

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog

    def items(self) -> list[StoreItem]:
        return [tool_item(record) for record in self.catalog.tools()]

    def source(self, name: str) -> str | None:
        return self.catalog.source(name)

    async def save(self, name: str, source: str, *, author: str = "agent") -> Change:
        return await self.catalog.save_change(name, source, author=author)

    async def revert(self, name: str, rev: str | None = None) -> Change:
        return await self.catalog.revert_change(name, rev)

    async def prune(self, name: str) -> Change:
        return await self.catalog.prune_change(name)

    async def restore(self, name: str) -> Change:
        return await self.catalog.restore_change(name)

    def history(self, name: str) -> list[HistoryEntry]:
        return self.catalog.history(name)

    def diff(self, name: str, rev: str | None = None) -> str:
        return self.catalog.diff(name, rev)

    async def outside_edit(self, names: set[str]) -> list[str]:
        return await self.catalog.handle_file_changes(names)

    async def accept_drift(self, name: str) -> Change:
        """Tools only: mark a drifted tool reviewed at the current commit (what a catalog-pane key calls)."""
        return await self.catalog.accept_drift(name)
