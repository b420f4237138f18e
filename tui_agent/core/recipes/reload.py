"""Recipe files changed on disk (an editor, git, another process): revalidate, re-register, commit valid edits."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from tui_agent.core import projectfs
from tui_agent.core.catalog.errors import PipelineError
from tui_agent.core.events import CatalogChanged, Notice
from tui_agent.core.recipes.recipefile import source_sha

if TYPE_CHECKING:
    from tui_agent.core.recipes.engine import RecipeEngine


async def reload_recipe_files(engine: "RecipeEngine", names: Iterable[str]) -> list[str]:
    """The names whose record changed; a broken file keeps its last good version live and is announced."""
    changed: list[str] = []
    for name in sorted(set(names)):
        path = engine.project.recipe_path(name)
        try:
            raw = projectfs.read_bytes(path) if path.is_file() else None
        except projectfs.LinkRefused:
            raw = b""  # not None: the book reads it again and keeps the refusal as the recipe's error
        except OSError:
            raw = None
        if raw is not None and source_sha(raw) == engine.book.disk_sha(name):
            continue
        if raw is None and engine.book.get(name) is None:
            continue
        engine.book.refresh(name)
        record = engine.book.get(name)
        changed.append(name)
        if record is not None and record.error is not None:
            where = f" (line {record.error.line})" if record.error.line else ""
            fallback = "; its last good version stays active" if record.recipe is not None else ""
            engine.emit(Notice(f"recipe {name} is broken{where}: {record.error.message}{fallback}", "error"))
            continue
        try:
            change = await engine.store.commit_outside_edit(name)
        except (PipelineError, ValueError, OSError) as exc:
            engine.emit(Notice(f"recipe {name}: could not commit the outside edit: {exc}", "warning"))
            continue
        engine.dispatcher_forget(name)
        verb = "removed (file deleted)" if record is None else "reloaded"
        engine.emit(Notice(f"recipe {name} {verb}"))
        if change is not None and change.deferred_reason:
            engine.emit(Notice(f"recipe {name}: commit deferred: {change.deferred_reason}", "warning"))
    if changed:
        engine.remember_statuses()
        engine.emit(CatalogChanged(tuple(changed), "recipes reloaded", "recipe"))
    return changed
