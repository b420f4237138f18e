"""Keeps the catalog pane live from the runtime's change feed (the stores' changes, the project watcher's findings)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from textual.css.query import NoMatches
from textual.message import Message

from tui_agent.core.errors import PROJECT_STATE_FAILURES
from tui_agent.core.events import CatalogChanged, Event
from tui_agent.core.versioning.branch import current_branch
from tui_agent.ui.catalog_rows import CatalogRow
from tui_agent.core.runtime_state import Restricted, mcp_of, recipes_of, suggestions_of
from tui_agent.ui.mcp_rows import held_mcp_rows, mcp_header, mcp_rows

OUTSIDE_EDIT = "edited outside tuiagent"
"""The catalog's reason for tools changed on disk by something other than this process (Catalog.outside_edit)."""

if TYPE_CHECKING:
    from tui_agent.core.runtime import Runtime
    from tui_agent.ui.host import UIHost
    from tui_agent.ui.widgets.catalog_pane import CatalogPane


def catalog_rows(runtime: Runtime) -> list[CatalogRow]:
    """Every tool and recipe of the runtime as rows (reads state.db for fresh usage counts); run in a thread."""
    from tui_agent.core.tending.suggestions import as_row  # off the first frame's import path

    rows = [item for store in runtime.stores() for item in store.items()]
    rows.extend(mcp_rows(mcp_of(runtime)) if not isinstance(runtime, Restricted) else held_mcp_rows(runtime.core.project))
    if (suggestions := suggestions_of(runtime)) is not None:
        rows.extend(as_row(chain) for chain in suggestions.current())
    return rows


class CoreEvent(Message):
    """A core event from the runtime's change feed or the recipe engine, posted to the app (from any thread); the app
    hands it to CatalogSync.receive."""

    def __init__(self, event: Event) -> None:
        super().__init__()
        self.event = event


class McpChanged(Message):
    """An MCP server died or changed its tools (the hub's listener, on any thread), posted to the app; the app has
    CatalogSync refresh the pane and the header."""


class CatalogSync:
    """Refreshes the catalog rows whenever the change feed says something changed: this process's stores, or the
    project watcher (an editor, another process's CLI, a `git checkout`); shows the feed's events in order."""

    def __init__(self, host: UIHost, *, show_event: Callable[[Event], None], pane: Callable[[], CatalogPane]) -> None:
        self.host = host
        self.pane = pane
        self.show_event = show_event
        """Posts one event to the conversation, behind the turn's (the turn runner's show_feed_event)."""
        self.runtime: Runtime | None = None
        self._refresh_scheduled = False
        self._refresh_again = False
        self._pending_select: str | None = None
        self.hold_first: Callable[[], Awaitable[None]] | None = None
        """Awaited before the first rows are read (the app's: until a prompt typed meanwhile reached the model)."""

    def start(self, runtime: Runtime) -> None:
        """Follow `runtime` (called on the app's thread once it is open): rows now, then on every change."""
        self.runtime = runtime
        self.pane().mark_new(runtime.core.new_tools)  # what a pull brought since the last session
        self.schedule()  # read in a thread: a thousand tools and the recent sessions' suggestions take a while
        # listeners on any thread: each event reaches the app as a CoreEvent message, then `receive`
        runtime.core.changes.add_listener(self.host.deliver_core_event)  # every store change and watcher finding, once
        if (recipes := recipes_of(runtime)) is not None:
            recipes.add_listener(self.host.deliver_core_event, changes=False)  # its tool calls and notices
        if (hub := mcp_of(runtime)) is not None:  # a server dying or changing its tools: the pane and the header follow
            hub.add_listener(self.host.mcp_changed)

    def receive(self, event: Event) -> None:
        """A core event the app received: posted to the conversation in the order received, like the agent's events
        (a recipe's tool call start and finish render in order)."""
        if isinstance(event, CatalogChanged) and event.kind == "tool" and event.reason == OUTSIDE_EDIT:
            with contextlib.suppress(NoMatches):  # (the pane is gone once the app closes; a listener may be late)
                self.pane().mark_new(event.names)  # a pull or another program changed them
        self.show_event(event)

    def schedule(self, select: str | None = None) -> None:
        """Coalesce bursts of changes into one refresh; `select` the named row once it is there."""
        if select is not None:
            self._pending_select = select
        if self._refresh_scheduled:
            self._refresh_again = True
            return
        self._refresh_scheduled = True
        self.host.run_worker(self._refresh(), group="catalog-refresh")

    async def _refresh(self) -> None:
        try:
            while True:
                self._refresh_again = False
                if self.hold_first is not None:
                    hold, self.hold_first = self.hold_first, None
                    await hold()
                if self.runtime is None:
                    return
                rows = await asyncio.to_thread(catalog_rows, self.runtime)
                self.apply_rows(rows)
                if not self._refresh_again:
                    return
        except NoMatches:  # the pane is gone: the app is closing
            pass
        except PROJECT_STATE_FAILURES as exc:  # git, the files, state.db
            self.host.notify(f"catalog refresh failed: {exc}", severity="error")
        finally:
            self._refresh_scheduled = False

    def apply_rows(self, rows: list[CatalogRow]) -> None:
        self.host.mcp_status, self.host.mcp_failed = mcp_header(mcp_of(self.runtime) if self.runtime is not None else None)
        pane = self.pane()
        pane.set_rows(rows)
        if self._pending_select is not None and pane.select(self._pending_select):
            self._pending_select = None

    def refresh_branch(self) -> None:
        """The header's branch, read off the app's loop."""
        self.host.run_worker(self._refresh_branch(), group="branch", exclusive=True)

    async def _refresh_branch(self) -> None:
        branch = await asyncio.to_thread(current_branch, self.host.project_root) or "no git"
        self.host.branch = branch
