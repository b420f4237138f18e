"""Keeps the catalog pane live from the runtime's change feed (the stores' changes, the project watcher's findings)."""

from __future__ import annotations

import asyncio
import threading
from typing import TYPE_CHECKING, Any

from textual import work
from textual.css.query import NoMatches

from tui_agent.core.events import Event
from tui_agent.core.versioning.branch import current_branch
from tui_agent.core.tending.suggestions import as_row
from tui_agent.ui.catalog_rows import CatalogRow
from tui_agent.ui.mcp_rows import mcp_header, mcp_rows

if TYPE_CHECKING:
    from tui_agent.ui.app import TuiAgentApp


def catalog_rows(runtime: Any) -> list[CatalogRow]:
    """Every tool and recipe of the runtime as rows (reads state.db for fresh usage counts)."""
    rows = [item for store in runtime.stores() for item in store.items()]
    rows.extend(mcp_rows(getattr(runtime, "mcp", None)))
    book = getattr(runtime, "suggestions", None)
    if book is not None:
        rows.extend(as_row(chain) for chain in book.current())
    return rows


class CatalogSyncMixin:
    """Refreshes the catalog rows whenever the change feed says something changed: this process's stores, or the
    project watcher (an editor, another process's CLI, a `git checkout`)."""

    def init_catalog_sync(self: "TuiAgentApp") -> None:
        self._refresh_scheduled = False
        self._refresh_again = False
        self._pending_select: str | None = None
        self.catalog_refreshes = 0
        self._recipe_events: asyncio.Queue[Event] = asyncio.Queue()

    def start_catalog_sync(self: "TuiAgentApp") -> None:
        self.runtime.changes.add_listener(self._on_recipe_event)  # every store change and watcher finding, once
        recipes = getattr(self.runtime, "recipes", None)
        if recipes is not None:
            recipes.add_listener(self._on_recipe_event, changes=False)  # its tool calls and notices
        self.show_recipe_events()
        mcp = getattr(self.runtime, "mcp", None)
        if mcp is not None:  # a server dying or changing its tools: the pane and the header follow
            mcp.add_listener(self._on_mcp_changed)

    def _on_mcp_changed(self: "TuiAgentApp") -> None:
        """MCP hub listener: may be called from the app's loop or from another thread."""
        if self._thread_id == threading.get_ident():
            self.schedule_catalog_refresh()
        else:
            self.call_from_thread(self.schedule_catalog_refresh)

    def _on_recipe_event(self: "TuiAgentApp", event: Event) -> None:
        """Listener of the change feed and of the recipe engine: shown in order, like the agent's events."""
        if self._thread_id == threading.get_ident():
            self._recipe_events.put_nowait(event)
        else:
            self.call_from_thread(self._recipe_events.put_nowait, event)

    @work(exclusive=True, group="recipe-events")
    async def show_recipe_events(self: "TuiAgentApp") -> None:
        """One consumer, so a recipe's tool call start and finish render in order."""
        while True:
            event = await self._recipe_events.get()
            try:
                await self.handle_event(event)
            except Exception as exc:
                self.notify(f"could not show a recipe event: {exc}", severity="error")

    def schedule_catalog_refresh(self: "TuiAgentApp", select: str | None = None) -> None:
        """Coalesce bursts of changes into one refresh."""
        if select is not None:
            self._pending_select = select
        if self._refresh_scheduled:
            self._refresh_again = True
            return
        self._refresh_scheduled = True
        self.refresh_catalog()

    @work(group="catalog-refresh")
    async def refresh_catalog(self: "TuiAgentApp") -> None:
        try:
            while True:
                self._refresh_again = False
                if self.runtime is None:
                    return
                rows = await asyncio.to_thread(catalog_rows, self.runtime)
                self.apply_rows(rows)
                if not self._refresh_again:
                    return
        except Exception as exc:
            self.notify(f"catalog refresh failed: {exc}", severity="error")
        finally:
            self._refresh_scheduled = False

    def refresh_catalog_now(self: "TuiAgentApp") -> None:
        """Synchronous refresh (startup): the rows as they are now."""
        if self.runtime is not None:
            self.apply_rows(catalog_rows(self.runtime))

    def apply_rows(self: "TuiAgentApp", rows: list[CatalogRow]) -> None:
        self.header.mcp, self.header.mcp_failed = mcp_header(getattr(self.runtime, "mcp", None))
        pane = self.catalog_pane
        pane.set_rows(rows)
        self.catalog_refreshes += 1
        if self._pending_select is not None and pane.select(self._pending_select):
            self._pending_select = None

    def refresh_branch(self: "TuiAgentApp") -> None:
        self.run_worker(self._refresh_branch(), group="branch", exclusive=True)

    async def _refresh_branch(self: "TuiAgentApp") -> None:
        branch = await asyncio.to_thread(current_branch, self.project_root) or "no git"
        try:
            self.header.branch = branch
        except NoMatches:  # the app closed while git answered
            pass
