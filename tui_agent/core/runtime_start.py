"""Starting an opening project's parts: the sandbox, then a trusted project's catalog and recipes (a restricted one's
previews) with its MCP servers starting alongside; a part that fails is said in `problems`, the rest still opens."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Iterable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from tui_agent.core.runtime_restricted import preview_stores
from tui_agent.core.runtime_state import Core, Restricted, Runtime, Workshop
from tui_agent.core.trust.live import GrantWatch

if TYPE_CHECKING:
    from tui_agent.core.catalog.api import AskInitGit
    from tui_agent.core.mcp.hub import McpHub
    from tui_agent.core.recipes.engine import RecipeEngine
    from tui_agent.core.recipes.seams import SubmitPrompt

T = TypeVar("T")


class StartupProgress:
    """What is still loading while a project opens; `listener` gets the pending parts after every change."""

    def __init__(self, listener: Callable[[tuple[str, ...]], None] | None, parts: Iterable[str]) -> None:
        self.listener = listener
        self.pending = list(parts)
        self._tell()

    def done(self, part: str) -> None:
        if part in self.pending:
            self.pending.remove(part)
            self._tell()

    def _tell(self) -> None:
        if self.listener is not None:
            self.listener(tuple(self.pending))


async def _start_sandbox(core: Core, sandbox_tier: str | None) -> bool:
    """The sandbox (without the project's virtualenv when restricted); False, with the problem noted, when it fails."""
    from tui_agent.core.sandbox import Sandbox

    settings = core.settings
    sandbox = await _opened(Sandbox.start(core.project, tier=sandbox_tier, min_level=settings.sandbox_min_level,
                                          project_venv=core.trust.trusted, settings=settings,
                                          prestart=core.prestart_sandbox))
    if isinstance(sandbox, Exception):  # SandboxUnavailable, or bubblewrap failing in an unexpected way
        core.sandbox_problem = f"sandbox unavailable: {sandbox}; run_shell, run_python and catalog tools are disabled"
        core.problems.append(core.sandbox_problem)
        return False
    core.sandbox = sandbox
    core.problems.extend(core.sandbox.notices)  # protected paths a run interrupted earlier had created
    toolchain = core.sandbox.toolchain
    core.problems.extend(f"sandbox toolchain: {problem}" for problem in (toolchain.problems if toolchain else ()))
    return True


async def _start_workshop(core: Core, workshop: Workshop, progress: StartupProgress, *,
                          ask_init_git: AskInitGit | None, submit_prompt: SubmitPrompt | None) -> None:
    """Catalog, then recipes (a trusted project's); a part that fails is reported in `problems` and the ones after it
    are skipped."""
    from tui_agent.core.catalog.api import Catalog
    from tui_agent.core.recipes import open_recipes
    from tui_agent.core.recipes.versioned import RecipeVersions
    from tui_agent.core.tending.drift_watch import DriftWatch
    from tui_agent.core.tending.suggestions import SuggestionBook
    from tui_agent.core.watch import ProjectWatcher

    project, sandbox = core.project, core.sandbox
    assert sandbox is not None
    opened = await _opened(Catalog.open(project, sandbox, ask_init_git=ask_init_git, changes=core.changes))
    if isinstance(opened, Exception):
        _part_failed(core, workshop, opened, "tool catalog", "open")
        return
    catalog = workshop.catalog = opened
    progress.done("tool catalog")
    tools = workshop.versioned["tool"] = catalog
    drift = workshop.drift_watch = DriftWatch(catalog)
    workshop.suggestions = SuggestionBook(project.sessions_dir, catalog.state)
    watcher = workshop.watcher = ProjectWatcher(project, core.changes, on_tools=tools.outside_edit,
                                                on_files=drift.files_changed)
    catalog.watcher = watcher
    core.problems.extend(catalog.state.notices)
    try:
        loaded = await _opened(open_recipes(project, catalog, catalog.git, submit_prompt=submit_prompt,
                                            permissions=core.permissions, changes=core.changes))
    finally:
        progress.done("recipes")
    if isinstance(loaded, Exception):
        _part_failed(core, workshop, loaded, "recipes", "load")
        return
    engine = workshop.recipes = loaded
    recipes = workshop.versioned["recipe"] = RecipeVersions(engine)
    drift.recipes = engine
    grants = workshop.grant_watch = GrantWatch.for_session(project, core.trust.state, partial(warn, core, engine))
    watcher.on_recipes = grants.gate(recipes.outside_edit, engine.book.disk_sha)  # a pulled grant is held
    watcher.on_grants = grants.files_changed
    watcher.on_files = both(engine.files_changed, drift.files_changed, grants.files_changed)  # + files MCP runs
    engine.watcher = watcher


async def _opened(opening: Awaitable[T]) -> T | Exception:
    """What `opening` gave, or the exception it raised: a part that fails to open is said, the runtime opens without it."""
    try:
        return await opening
    except Exception as error:  # edge: opening a part runs the sandbox, git, the project's files and its MCP servers
        return error


def _part_failed(core: Core, workshop: Workshop, error: Exception, part: str, verb: str) -> None:
    """A workshop part that failed: the workshop says so, and so do the problems shown at open."""
    reason = part_failure(error, core.project.root)
    workshop.failure = f"the {part} could not {verb}: {reason}"
    core.problems.append(f"{part} unavailable: {reason}")


def part_failure(error: Exception, root: Path) -> str:
    """Why a part of the project did not open: an OSError in words (the file, what it means, what to do), never
    `[Errno N]`; anything else as its own message."""
    if not isinstance(error, OSError):
        return str(error)
    from tui_agent.core.catalog.errors import os_failure_hint

    where = Path(os.fsdecode(error.filename)) if error.filename else None
    if where is not None and where.is_relative_to(root):
        where = where.relative_to(root)
    return f"{where}: {os_failure_hint(error)}" if where is not None else os_failure_hint(error)


def warn(core: Core, engine: RecipeEngine, text: str) -> None:
    """A warning shown live (the recipe engine's listeners: the TUI's conversation) and kept in `problems`."""
    from tui_agent.core.events import Notice

    core.problems.append(text)
    engine.emit(Notice(text, "warning"))


def both(*callbacks: Callable[[Iterable[str]], None]) -> Callable[[Iterable[str]], None]:
    """One `on_files` callback that hands the same paths to each of `callbacks`."""
    def call(paths: Iterable[str]) -> None:
        changed = list(paths)
        for callback in callbacks:
            callback(changed)
    return call


async def _start_mcp(core: Core, workshop: Workshop, starting: asyncio.Task[McpHub]) -> None:
    """The MCP servers of `.mcp.json` and `[mcp.servers]` (started meanwhile), attached once the sandbox is known;
    one that fails is a problem shown."""
    from tui_agent.core.mcp.sandbox_bridge import attach_to_sandbox

    hub = await _opened(starting)
    if isinstance(hub, Exception):
        core.problems.append(f"MCP servers unavailable: {hub}")
        return
    workshop.mcp = hub
    attach_to_sandbox(workshop.mcp, core.permissions, core.sandbox)
    core.problems.extend(workshop.mcp.failures())


async def start_parts(opening: Runtime, progress: StartupProgress, *, sandbox_tier: str | None,
                       ask_init_git: AskInitGit | None, submit_prompt: SubmitPrompt | None) -> None:
    """Sandbox, then a restricted project's previews or a trusted one's catalog and recipes, with its MCP servers
    starting meanwhile."""
    core = opening.core
    if isinstance(opening, Restricted):  # the committed tools and recipes are listed, never imported, tested or run
        if await _start_sandbox(core, sandbox_tier):
            progress.done("sandbox")
        opening.previews.update(await asyncio.to_thread(preview_stores, core.project))
        progress.done("tool catalog")
        progress.done("recipes")
        return
    from tui_agent.core.mcp.hub import McpHub

    workshop = opening.workshop
    mcp_starting = asyncio.create_task(McpHub.start(core.project))  # alongside the sandbox and the catalog
    try:
        if await _start_sandbox(core, sandbox_tier):
            progress.done("sandbox")
            await _start_workshop(core, workshop, progress, ask_init_git=ask_init_git, submit_prompt=submit_prompt)
    finally:
        await _start_mcp(core, workshop, mcp_starting)
