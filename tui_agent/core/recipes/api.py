"""`open_recipes`: builds the recipe engine of a project on top of its catalog and git layer."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import tui_agent.core.trust.check  # noqa: F401  # it tells the git door how to ask workspace trust (recipe commits)
from tui_agent.core.catalog.startup import head_tool_blobs
from tui_agent.core.changes import ChangeFeed
from tui_agent.core.versioning.gitstore import CatalogGit
from tui_agent.core.recipes.recipefile import recipe_name_problem
from tui_agent.core.project import Project
from tui_agent.core.recipes.book import RecipeBook
from tui_agent.core.recipes.engine import RecipeEngine
from tui_agent.core.recipes.seams import SubmitPrompt, ToolRunner, WriteApprover
from tui_agent.core.recipes.loopguard import LoopGuard
from tui_agent.core.recipes.runlog import RunLog
from tui_agent.core.recipes.versioned_recipes import RecipeStore


async def catch_up(engine: RecipeEngine) -> None:
    """Valid recipe files that differ from git (edited or deleted while tuiagent was not running) are committed, as
    the tool catalog does at startup; a deferred commit is reported as a Notice by later operations."""
    for record in engine.book.records():
        if record.error is None:
            try:
                await engine.store.commit_outside_edit(record.name)
            except (ValueError, OSError):
                continue
    on_disk = {record.name for record in engine.book.records()}
    committed = await asyncio.to_thread(head_tool_blobs, engine.store.git, engine.project.recipes_dir)
    for file_name in sorted(committed or {}):
        name = file_name.removesuffix(".toml")
        if file_name.endswith(".toml") and name not in on_disk and recipe_name_problem(name) is None:
            try:  # deleted by hand while tuiagent was not running: committed as a deletion, restorable
                await engine.store.commit_outside_edit(name)
            except (ValueError, OSError):
                continue


def _tool_status(catalog: ToolRunner) -> Callable[[str], str | None]:
    def status(name: str) -> str | None:
        record = catalog.get(name)
        return None if record is None else record.status

    return status


async def open_recipes(
    project: Project,
    catalog: ToolRunner,
    git: CatalogGit | None = None,
    *,
    submit_prompt: SubmitPrompt | None = None,
    guard: LoopGuard | None = None,
    listen_to_catalog: bool = True,
    permissions: WriteApprover | None = None,
    changes: ChangeFeed | None = None,
) -> RecipeEngine:
    """Load `.agent/recipes/` (a broken file is recorded, never fatal) and return the engine.

    `catalog` is the tool catalog: the engine calls its tools and, with `listen_to_catalog`, re-checks required
    tools whenever it changes; `git` defaults to the catalog's.
    `submit_prompt` hands `prompt` actions to the agent; without it they fail with a clear message.
    `permissions` (the runtime's `Permissions`, as the agent gets it) approves tool actions on tools that declare
    WRITES = True; without it those actions are refused. Every other tool runs with the project read-only.
    `changes` is the project's change feed (the catalog's), where the engine publishes recipe changes."""
    git = git or catalog.git

    def committed(name: str) -> bytes | None:
        try:
            return git.show(f".agent/recipes/{name}.toml", "HEAD")
        except ValueError:
            return None

    book = RecipeBook(project, tool_status=_tool_status(catalog), committed_source=committed)
    await asyncio.to_thread(book.load)
    for record in book.records():
        book.set_commit(record.name, await asyncio.to_thread(git.last_commit_for, f".agent/recipes/{record.name}.toml"))
    engine = RecipeEngine(project, book, RecipeStore(project, git, book), catalog, runlog=RunLog(project),
                          submit_prompt=submit_prompt, guard=guard, permissions=permissions, changes=changes)
    await catch_up(engine)
    if listen_to_catalog:
        catalog.add_listener(engine.handle_event)
    return engine
