"""The parts of an open runtime: the Core every state has, a trusted project's Workshop, and the base classes
that give every state the same attributes (None where it has no such part), sessions, stores and closing."""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

    from tui_agent.core.agent.loop import Agent
    from tui_agent.core.agent.permissions import Permissions
    from tui_agent.core.agent.pricing import UsageTotals
    from tui_agent.core.agent.sessions import SessionLog
    from tui_agent.core.agent.turns import Turn
    from tui_agent.core.catalog.api import Catalog
    from tui_agent.core.changes import ChangeFeed
    from tui_agent.core.mcp.hub import McpHub
    from tui_agent.core.project import Project
    from tui_agent.core.settings import Settings
    from tui_agent.core.recipes.engine import RecipeEngine
    from tui_agent.core.sandbox import Sandbox
    from tui_agent.core.tending.drift_watch import DriftWatch
    from tui_agent.core.tending.suggestions import SuggestionBook
    from tui_agent.core.trust.check import TrustStatus
    from tui_agent.core.trust.live import GrantWatch
    from tui_agent.core.undo.service import UndoService
    from tui_agent.core.versioning.store_interface import VersionedStore
    from tui_agent.core.watch import ProjectWatcher


@dataclass
class Core:
    """What every open project has, trusted or not. `sandbox` is None only when it failed to start
    (`sandbox_problem` says why); `undo` is None outside a git work tree."""

    project: Project
    settings: Settings
    permissions: Permissions
    trust: TrustStatus
    model: str
    changes: ChangeFeed
    problems: list[str] = field(default_factory=list)
    sandbox: Sandbox | None = None
    sandbox_problem: str | None = None
    undo: UndoService | None = None
    session: SessionLog | None = None
    """The conversation's file (set once the project is open; /clear and /resume switch it)."""
    resumed: bool = False
    model_error: str | None = None
    new_tools: tuple[str, ...] = ()
    """Tools added or changed since this trusted project was last opened or closed (a pull): shown as new."""
    prestart_sandbox: bool = True
    """False: the sandbox's warm workers are left to `Sandbox.prestart()` (the TUI's, after the first request)."""


@dataclass
class Workshop:
    """A trusted project's live parts; each is None when it failed to start (the problem is in `Core.problems`)."""

    catalog: Catalog | None = None
    recipes: RecipeEngine | None = None
    mcp: McpHub | None = None
    """The session's MCP servers (`.mcp.json`, `[mcp.servers]`)."""
    watcher: ProjectWatcher | None = None
    watch_task: asyncio.Task[None] | None = None
    versioned: dict[str, VersionedStore] = field(default_factory=dict)
    """"tool" / "recipe" → the same store verbs for both (save, revert, prune, restore, history, diff, outside edit)."""
    suggestions: SuggestionBook | None = None
    drift_watch: DriftWatch | None = None
    grant_watch: GrantWatch | None = None
    """Keeps the approved grants when a pull changes them during the session (and says what changed)."""
    failure: str | None = None
    """Why the catalog or the recipes did not open (also in `Core.problems`), None when both did."""


class OpenState(ABC):
    """What every open state shares: the core's parts as attributes, sessions, stores and closing."""

    core: Core

    def store(self, kind: str) -> VersionedStore | None:
        """The versioned store of tools or of recipes (None when that part did not start)."""
        return self._stores().get(kind)

    def stores(self) -> list[VersionedStore]:
        return list(self._stores().values())

    @abstractmethod
    def _stores(self) -> dict[str, VersionedStore]:
        """"tool" / "recipe" → the state's stores (live ones when trusted, read-only previews when restricted)."""

    def _agent(self) -> Agent | None:
        return None

    def resume(self, session_id: str) -> None:
        """Switch the agent to an earlier session (its messages and usage; appends go to its file)."""
        from tui_agent.core.agent.session_turns import load_turns
        from tui_agent.core.agent.sessions import SessionLog

        session = SessionLog.reopen(self.core.project, session_id)
        self._switch(session, load_turns(session.path), usage_from_session(session.path))

    def new_session(self) -> None:
        """Start a fresh conversation in a new session file (what /clear does)."""
        from tui_agent.core.agent.pricing import UsageTotals
        from tui_agent.core.agent.sessions import SessionLog

        self._switch(SessionLog.create(self.core.project, model=self.core.model), [], UsageTotals())

    def _switch(self, session: SessionLog, turns: list[Turn], usage: UsageTotals) -> None:
        if self.core.session is not None:
            self.core.session.close()
        self.core.session = session
        agent = self._agent()
        if agent is not None:
            agent.session, agent.usage = session, usage
            agent.conversation.replace(turns)
            agent.authored_names.clear()

    @abstractmethod
    def start_watching(self) -> None:
        """Run the project watcher until `aclose` (a restricted project has none)."""

    async def aclose(self) -> None:
        """Close every part (a part failing to close is a problem noted; the others still close)."""
        from tui_agent.core.trust.check import end_this_run, tools_changed_since_last_seen

        core = self.core
        if core.trust.state == "this run":
            end_this_run(core.project)
        elif core.trust.state == "trusted":  # what this session authored is not news at the next open
            await asyncio.to_thread(tools_changed_since_last_seen, core.project)
        await self._close_parts()
        agent = self._agent()
        if agent is not None:
            await agent.client.aclose()
        if core.session is not None:
            core.session.close()
        if core.sandbox is not None:
            await close_part(core, core.sandbox)

    @abstractmethod
    async def _close_parts(self) -> None:
        """The state's own parts (before the agent, the session and the sandbox)."""


async def close_part(core: Core, part: Any) -> None:
    try:
        await part.aclose()
    except Exception as error:  # closing must go on for the other parts
        core.problems.append(f"closing {type(part).__name__}: {error}")


class TrustedState(OpenState):
    """A trusted state's parts, read from its workshop."""

    workshop: Workshop

    def _stores(self) -> dict[str, VersionedStore]:
        return self.workshop.versioned

    def start_watching(self) -> None:
        workshop = self.workshop
        if workshop.watcher is not None and workshop.watch_task is None:
            workshop.watch_task = asyncio.create_task(workshop.watcher.run(), name="project-watcher")
            workshop.watch_task.add_done_callback(self._watcher_stopped)

    def _watcher_stopped(self, task: asyncio.Task[None]) -> None:
        if not task.cancelled() and task.exception() is not None:
            self.core.problems.append(f"the project watcher stopped: {task.exception()}")

    async def _close_parts(self) -> None:
        workshop = self.workshop
        if workshop.watch_task is not None:
            workshop.watch_task.cancel()
            await asyncio.gather(workshop.watch_task, return_exceptions=True)
        if workshop.drift_watch is not None:
            await workshop.drift_watch.aclose()
        for part in (workshop.mcp, workshop.recipes, workshop.catalog):
            if part is not None:
                await close_part(self.core, part)


def usage_from_session(path: Path) -> UsageTotals:
    from tui_agent.core.agent.pricing import UsageTotals
    from tui_agent.core.agent.sessions import load_usage

    record = load_usage(path)
    return UsageTotals(int(record["input_tokens"]), int(record["output_tokens"]), int(record["cache_read_tokens"]),
                       int(record["cache_write_tokens"]), record["cost_usd"])
