"""RecipeVersions: the recipe engine as a `VersionedStore` (the same verbs and `Change` as the tool catalog)."""

from __future__ import annotations

from typing import Literal

from tui_agent.core import projectfs
from tui_agent.core.recipes.engine import RecipeEngine
from tui_agent.core.recipes.model import RecipeRecord
from tui_agent.core.recipes.versioned_recipes import RecipeChange
from tui_agent.core.versioning.gitqueries import HistoryEntry
from tui_agent.core.versioning.store_interface import Change, StoreItem, as_timestamp, first_line


def recipe_item(record: RecipeRecord) -> StoreItem:
    """A recipe's list entry: its description (or trigger → action), status, runs, and why it is broken."""
    summary = first_line(record.description)
    if not summary and record.recipe is not None:
        summary = f"on {record.recipe.trigger.on}: {record.recipe.action.describe()}"
    error = record.error
    error_text = f"{error.stage}: {error.message}" if error is not None else "; ".join(record.problems)
    return StoreItem(name=record.name, kind="recipe", status=record.status, calls=record.runs,
                     last_used=as_timestamp(record.last_run), summary=summary or error_text, failures=record.failures,
                     error=error_text)


def as_change(name: str, verb: str, change: RecipeChange) -> Change:
    verb = "update" if verb == "save" and not change.created else ("add" if verb == "save" else verb)
    return Change("recipe", name, verb, change.commit is not None, change.commit, change.deferred_reason, change.message,
                  created=change.created, record=change.record)


class RecipeVersions:
    """Each verb validates the recipe, writes it atomically and commits it under the writer lock (RecipeStore)."""

    kind: Literal["tool", "recipe"] = "recipe"

    def __init__(self, engine: RecipeEngine) -> None:
        self.engine = engine

    def items(self) -> list[StoreItem]:
        return [recipe_item(record) for record in self.engine.records()]

    def source(self, name: str) -> str | None:
        path = self.engine.project.recipe_path(name)
        return projectfs.read_text(path, errors="replace") if path.is_file() else None

    async def save(self, name: str, source: str, *, author: str = "agent") -> Change:
        return as_change(name, "save", await self.engine.save_change(name, source, author=author))

    async def revert(self, name: str, rev: str | None = None) -> Change:
        return as_change(name, "revert", await self.engine.revert(name, rev))

    async def prune(self, name: str) -> Change:
        return as_change(name, "prune", await self.engine.prune(name))

    async def restore(self, name: str) -> Change:
        return as_change(name, "restore", await self.engine.restore(name))

    def history(self, name: str) -> list[HistoryEntry]:
        return self.engine.store.history(name)

    def diff(self, name: str, rev: str | None = None) -> str:
        return self.engine.store.diff(name, rev)

    async def outside_edit(self, names: set[str]) -> list[str]:
        return await self.engine.reload_recipes(names)
