"""The catalog's change stream as the MCP server needs it: one adapter over the catalog's listener and watch API."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from tui_agent.core.catalog.api import Catalog


class ChangeFeed(Protocol):
    """Calls subscribers when the catalog may have changed; `run()` watches the files until cancelled."""

    def subscribe(self, callback: Callable[[], None]) -> None: ...

    async def run(self) -> None: ...


class CatalogListenerFeed:
    """The catalog's tool changes from the project's ChangeFeed (`Catalog.add_listener` filters it: own mutations,
    calls) and its ProjectWatcher (`Catalog.watch()`: files changed by another process, an editor, git)."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog

    def subscribe(self, callback: Callable[[], None]) -> None:
        self.catalog.add_listener(lambda _event: callback())

    async def run(self) -> None:
        await self.catalog.watch()
