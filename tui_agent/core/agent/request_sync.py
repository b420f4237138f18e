"""What a request waits for before it is built: the project watcher's settle (files changed so far handled) and, for a
session's first request, its git glance; a turn's first ones start with the turn, while undo checkpoints the tree."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

from tui_agent.core.agent.request_prefix import Prompting
from tui_agent.core.events import Event

if TYPE_CHECKING:
    from tui_agent.core.watch import ProjectWatcher

Forwarding = Callable[[list[Event]], AbstractContextManager[None]]
"""Collects what the stores publish (ToolAuthored, CatalogChanged) into the list while it is entered."""


class RequestSync:
    """Before each request: the watcher's settle, with what the stores published meanwhile (ToolAuthored,
    CatalogChanged, joined to the turn's events). `ahead` starts the first request's settle and glance early."""

    def __init__(self, watcher: Callable[[], ProjectWatcher | None], forwarding: Forwarding, prompting: Prompting) -> None:
        self.watcher = watcher
        self.forwarding = forwarding
        self.prompting = prompting
        self._ahead: asyncio.Task[list[Event]] | None = None

    def ahead(self, prompt: str) -> None:
        """A turn starts: its first request's settle and the session's git glance begin now (not for an empty prompt,
        which is refused before any request)."""
        if not prompt.strip():
            return
        self.prompting.glance_ahead()
        if self.watcher() is not None and self._ahead is None:
            self._ahead = asyncio.create_task(self._settle())

    async def settled(self) -> list[Event]:
        """Wait until the files changed so far have been handled (by the settle started ahead, if one was): what the
        stores published meanwhile."""
        ahead, self._ahead = self._ahead, None
        return await ahead if ahead is not None else await self._settle()

    async def _settle(self) -> list[Event]:
        watcher = self.watcher()
        published: list[Event] = []
        if watcher is not None:
            with self.forwarding(published):
                await watcher.settle()
        return published

    async def turn_ended(self) -> None:
        """What no request took (a turn ended before its request) is dropped: a later one settles and glances anew."""
        self.prompting.drop_glance()
        ahead, self._ahead = self._ahead, None
        if ahead is not None:
            ahead.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await ahead
