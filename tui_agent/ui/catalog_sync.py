"""Keeps the catalog pane live: catalog listeners, the file watcher worker, and a cheap poll of state.db and git HEAD."""

from __future__ import annotations

import asyncio
import subprocess
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import work

from tui_agent.core.events import CatalogChanged, Event
from tui_agent.ui.catalog_rows import CatalogRow, row_from_recipe, row_from_tool
from tui_agent.ui.drift_watch import dependency_files, stamps

if TYPE_CHECKING:
    from tui_agent.ui.app import TuiAgentApp


def catalog_rows(runtime: Any) -> list[CatalogRow]:
    """Every tool and recipe of the runtime as rows (reads state.db for fresh usage counts)."""
    rows: list[CatalogRow] = []
    catalog = getattr(runtime, "catalog", None)
    if catalog is not None:
        rows.extend(row_from_tool(record) for record in catalog.tools())
    recipes = getattr(runtime, "recipes", None)
    records = getattr(recipes, "records", None) if recipes is not None else None
    if records is not None:
        rows.extend(row_from_recipe(record) for record in records())
    return rows


def file_stamp(path: Path) -> tuple[int, int]:
    try:
        stat = path.stat()
    except OSError:
        return (0, 0)
    return (stat.st_mtime_ns, stat.st_size)


def current_branch(root: Path) -> str:
    """The checked-out branch, `detached@abc1234`, or "" outside a git repository."""
    result = subprocess.run(["git", "symbolic-ref", "--short", "-q", "HEAD"], cwd=root, capture_output=True, text=True, check=False)
    if result.returncode == 0:
        return result.stdout.strip()
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True, check=False)
    return f"detached@{head.stdout.strip()}" if head.returncode == 0 else ""


class CatalogSyncMixin:
    """Refreshes the catalog rows whenever the catalog, the watcher, another process or a recipe changes something."""

    def init_catalog_sync(self: "TuiAgentApp") -> None:
        self._refresh_scheduled = False
        self._refresh_again = False
        self._pending_select: str | None = None
        self._stamps: tuple[tuple[int, int], ...] = ()
        self._head_stamp: tuple[int, int] = (0, 0)
        self.catalog_refreshes = 0
        self._recipe_events: asyncio.Queue[Event] = asyncio.Queue()
        self._dependencies: list[Path] = []  # files tools depend on: an edit re-checks drift (drift_watch.py)

    def _watched_stamps(self: "TuiAgentApp") -> tuple[tuple[int, int], ...]:
        project = self.project_root / ".agent"
        paths = [project / "state.db", project / "state.db-wal", project / "tools", project / "recipes"]
        return tuple(file_stamp(path) for path in paths) + stamps(self._dependencies)

    def start_catalog_sync(self: "TuiAgentApp") -> None:
        catalog = getattr(self.runtime, "catalog", None)
        if catalog is not None:
            catalog.add_listener(self._on_catalog_changed)
        recipes = getattr(self.runtime, "recipes", None)
        add_listener = getattr(recipes, "add_listener", None)
        if add_listener is not None:
            add_listener(self._on_recipe_event)
            self.show_recipe_events()
        self._stamps = self._watched_stamps()
        if self.watch_catalog_enabled and catalog is not None:
            self.watch_catalog()
        self.set_interval(self.poll_interval, self._poll_outside_changes, name="catalog-poll")

    def _on_catalog_changed(self: "TuiAgentApp", event: CatalogChanged) -> None:
        """Catalog listener: may be called from the app's loop or from another thread."""
        if self._thread_id == threading.get_ident():
            self.schedule_catalog_refresh()
        else:
            self.call_from_thread(self.schedule_catalog_refresh)

    def _on_recipe_event(self: "TuiAgentApp", event: Event) -> None:
        """Recipe engine listener: its tool calls, notices and catalog changes show like the agent's."""
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

    @work(exclusive=True, group="catalog-watch")
    async def watch_catalog(self: "TuiAgentApp") -> None:
        """Hot reload: the catalog's watchfiles loop, and the recipes' if the runtime has one."""
        watchers = [self.runtime.catalog.watch()]
        recipes = getattr(self.runtime, "recipes", None)
        if recipes is not None and hasattr(recipes, "watch"):
            watchers.append(recipes.watch())
        try:
            await asyncio.gather(*watchers)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self.notify(f"file watcher stopped: {exc}", severity="error")

    def _poll_outside_changes(self: "TuiAgentApp") -> None:
        """Another process (`tuiagent tools …`) writes state.db and tool files: notice it by their stamps."""
        stamps = self._watched_stamps()
        if stamps != self._stamps:
            self._stamps = stamps
            self.schedule_catalog_refresh()
        head = file_stamp(self.project_root / ".git" / "HEAD")
        if head != self._head_stamp:
            self._head_stamp = head
            self.refresh_branch()

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
                self._dependencies = await asyncio.to_thread(dependency_files, self.project_root, getattr(self.runtime, "catalog", None))
                self._stamps = self._watched_stamps()  # before reading the rows: a later edit is seen by the next poll
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
        pane = self.catalog_pane
        pane.set_rows(rows)
        self.catalog_refreshes += 1
        if self._pending_select is not None and pane.select(self._pending_select):
            self._pending_select = None

    def refresh_branch(self: "TuiAgentApp") -> None:
        self.run_worker(self._refresh_branch(), group="branch", exclusive=True)

    async def _refresh_branch(self: "TuiAgentApp") -> None:
        self.header.branch = await asyncio.to_thread(current_branch, self.project_root) or "no git"
