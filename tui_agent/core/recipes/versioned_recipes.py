"""The recipe pipeline: validate → atomic write → git commit → register, plus history, diff, revert, prune and restore."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tui_agent.core import projectfs
from tui_agent.core.catalog.errors import PipelineError, failure_reason, write_failed
from tui_agent.core.catalog.files import Undo, atomic_write, read_bytes_or_none
from tui_agent.core.errors import PROJECT_FAILURES
from tui_agent.core.versioning.gitqueries import HistoryEntry
from tui_agent.core.versioning.gitstore import CatalogGit
from tui_agent.core.versioning.unsaved import unsaved_work
from tui_agent.core.versioning.versions import diff_since, revert_target
from tui_agent.core.versioning.writelock import WriterLock
from tui_agent.core.project import Project
from tui_agent.core.recipes.book import RecipeBook
from tui_agent.core.recipes.model import Recipe, RecipeRecord
from tui_agent.core.recipes.recipefile import parse_recipe, recipe_name_problem


@dataclass(frozen=True)
class RecipeChange:
    """What a pipeline operation did: the record after it, the commit (or why it was deferred)."""

    record: RecipeRecord | None
    created: bool
    changed: bool
    commit: str | None
    deferred_reason: str | None
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "record": self.record.to_dict() if self.record else None,
            "created": self.created,
            "changed": self.changed,
            "commit": self.commit,
            "deferred_reason": self.deferred_reason,
            "message": self.message,
        }


class RecipeStore:
    """Every change to a recipe file goes through here; any failure leaves disk and git as they were."""

    def __init__(self, project: Project, git: CatalogGit, book: RecipeBook) -> None:
        self.project = project
        self.git = git
        self.book = book
        self._lock = asyncio.Lock()
        self.writer = WriterLock(project.root)  # across processes: held from reading the file to its commit

    def rel(self, name: str) -> str:
        return f".agent/recipes/{name}.toml"

    def kept_copy(self, name: str) -> Path:
        """Where prune keeps the last copy of a recipe (parsed again, like any recipe, when restored)."""
        return self.project.cache_dir / "recipes" / f"{name}.toml"

    def _refuse_unsaved(self, name: str, verb: str) -> None:
        problem = unsaved_work(self.git, self.project.root, self.rel(name), verb)
        if problem is not None:
            raise PipelineError("unsaved", problem)

    def _check_name(self, name: str) -> None:
        problem = recipe_name_problem(name)
        if problem:
            raise PipelineError("name", problem)

    async def save(self, name: str, source: str | bytes, *, verb: str | None = None, message: str | None = None) -> RecipeChange:
        """Validate and write a recipe, commit it and register it; raises PipelineError and changes nothing on failure."""
        self._check_name(name)
        raw = source.encode("utf-8") if isinstance(source, str) else bytes(source)
        recipe = parse_recipe(name, raw)
        async with self._lock:
            return await asyncio.to_thread(self._write_and_commit, recipe, raw, verb, message)

    def _write_and_commit(self, recipe: Recipe, raw: bytes, verb: str | None, message: str | None) -> RecipeChange:
        with self.writer.held():
            return self._write_and_commit_locked(recipe, raw, verb, message)

    def _write_and_commit_locked(self, recipe: Recipe, raw: bytes, verb: str | None, message: str | None) -> RecipeChange:
        path = self.project.recipe_path(recipe.name)
        previous = read_bytes_or_none(path)
        created = previous is None
        if previous == raw:
            self.book.accept(recipe)
            return RecipeChange(self.book.get(recipe.name), False, False, None, None, f"recipe {recipe.name} is unchanged")
        undo = Undo(path)
        try:
            self.project.ensure_layout()
            atomic_write(path, raw)
        except OSError as exc:
            undo.discard()
            raise write_failed(self.rel(recipe.name), exc) from exc
        commit_message = message or f"tuiagent: {verb or ('add' if created else 'update')} recipe {recipe.name}"
        try:
            outcome = self.git.commit({self.rel(recipe.name): raw}, commit_message)
        except PROJECT_FAILURES as exc:  # git, the disk: the file is put back
            undo.restore()
            raise PipelineError("commit", f"git commit failed, nothing changed: {failure_reason(exc)}") from exc
        undo.discard()
        self.book.accept(recipe)
        if outcome.committed:
            self.book.set_commit(recipe.name, outcome.sha)
        return RecipeChange(self.book.get(recipe.name), created, True, outcome.sha, outcome.deferred_reason, outcome.message)

    async def prune(self, name: str) -> RecipeChange:
        """Delete a recipe (a new commit); `restore` brings it back."""
        self._check_name(name)
        async with self._lock:
            return await asyncio.to_thread(self._prune, name)

    def _prune(self, name: str) -> RecipeChange:
        path = self.project.recipe_path(name)
        with self.writer.held():
            if not path.is_file():
                raise PipelineError("missing", f"there is no recipe {name} to prune")
            self._refuse_unsaved(name, "prune")
            atomic_write(self.kept_copy(name), projectfs.read_bytes(path))  # restore works even while commits are deferred
            undo = Undo(path)
            try:
                undo.delete()
                outcome = self.git.commit({self.rel(name): None}, f"tuiagent: prune recipe {name}")
            except PROJECT_FAILURES as exc:
                undo.restore()
                raise PipelineError("commit", f"git commit failed, the recipe is still there: {failure_reason(exc)}") from exc
            undo.discard()
        self.book.forget(name)
        self.book.set_commit(name, outcome.sha)
        return RecipeChange(None, False, True, outcome.sha, outcome.deferred_reason, outcome.message)

    async def restore(self, name: str) -> RecipeChange:
        """Bring back the last version of a pruned (or deleted) recipe, as a new commit."""
        self._check_name(name)
        if self.project.recipe_path(name).is_file():
            raise PipelineError("name", f"recipe {name} exists; nothing to restore")
        await asyncio.to_thread(self._refuse_unsaved, name, "restore")
        found = await asyncio.to_thread(self.git.last_version_before_deletion, self.rel(name))
        kept = read_bytes_or_none(self.kept_copy(name))
        found = found or (("the copy kept in .agent/cache", kept) if kept is not None else None)
        if found is None:
            raise PipelineError("missing", f"git has no deleted version of recipe {name} and .agent/cache kept no copy")
        _rev, raw = found
        return await self.save(name, raw, message=f"tuiagent: restore recipe {name}")

    async def revert(self, name: str, rev: str | None = None) -> RecipeChange:
        """Go back to `rev` (default: the version before the current one) through the pipeline, as a new commit."""
        self._check_name(name)
        await asyncio.to_thread(self._refuse_unsaved, name, "revert")
        current = read_bytes_or_none(self.project.recipe_path(name))
        target, raw = await asyncio.to_thread(revert_target, self.git, self.rel(name), current, rev, f"recipe {name}")
        return await self.save(name, raw, message=f"tuiagent: revert recipe {name} to {target[:10]}")

    async def commit_outside_edit(self, name: str) -> RecipeChange | None:
        """A person edited or deleted a recipe file: commit the valid edit or the deletion, like the tool watcher does;
        None when HEAD already holds it (the change was committed by the process that made it, or by a checkout)."""
        async with self._lock:
            return await asyncio.to_thread(self._commit_outside_edit, name)

    def _commit_outside_edit(self, name: str) -> RecipeChange | None:
        path, rel = self.project.recipe_path(name), self.rel(name)
        with self.writer.held():
            raw = projectfs.read_bytes(path) if path.is_file() else None
            committed = self._show(rel, "HEAD")
            if committed == raw and rel not in self.git.pending():
                return None
            # A change the journal already holds (tuiagent's own revert or prune whose commit was deferred) keeps its
            # message: relabelled as an outside edit, the next revert or prune would refuse it as the person's work.
            journaled = self.git.pending_change(rel)
            own = journaled.message if journaled is not None and journaled.content == raw else None
            if raw is None:
                outcome = self.git.commit({rel: None}, own or f"tuiagent: remove recipe {name} (file deleted outside tuiagent)")
                return RecipeChange(None, False, True, outcome.sha, outcome.deferred_reason, outcome.message)
            recipe = parse_recipe(name, raw)
            verb = "add" if committed is None else "update"
            outcome = self.git.commit({rel: raw}, own or f"tuiagent: {verb} recipe {name} (edited outside tuiagent)")
        if outcome.committed:
            self.book.set_commit(name, outcome.sha)
        return RecipeChange(self.book.get(recipe.name), committed is None, True, outcome.sha, outcome.deferred_reason, outcome.message)

    def _show(self, rel: str, rev: str) -> bytes | None:
        try:
            return self.git.show(rel, rev)
        except ValueError:
            return None

    def history(self, name: str) -> list[HistoryEntry]:
        self._check_name(name)
        return self.git.history(self.rel(name))

    def show(self, name: str, rev: str) -> bytes | None:
        self._check_name(name)
        return self.git.show(self.rel(name), rev)

    def diff(self, name: str, rev: str | None = None) -> str:
        """Diff of the recipe file from `rev` (default: the version before its latest commit) to the work tree."""
        self._check_name(name)
        return diff_since(self.git, self.rel(name), rev, f"recipe {name}")
