"""Pre-started fresh workers kept waiting for runs that are not forked: network runs, writable runs through an overlay
(a fresh mount per run: an overlay caches what it looked up), and every run without fork servers."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from pathlib import Path

from tui_agent.core.sandbox import tiers
from tui_agent.core.sandbox.process import Worker

Spawn = Callable[[bool, bool, bool], Awaitable[Worker]]
"""Start a worker: (network, project writable, overlay)."""


class WarmPool:
    """Up to `size` pre-started offline workers per kind (project writable or not); `kinds()` says which kinds are
    kept full and `overlay()` whether writable ones are mounted as overlays (both can change while tuiagent runs)."""

    def __init__(self, root: Path, size: int, spawn: Spawn, kinds: Callable[[], tuple[bool, ...]],
                 overlay: Callable[[], bool]) -> None:
        self.root = root
        self.size = size
        self._spawn = spawn
        self._kinds = kinds
        self._overlay = overlay
        self._workers: dict[bool, list[Worker]] = {True: [], False: []}
        self._kept: set[bool] = {True}
        """Kinds the refill keeps full; the read-only one joins after its first use (catalog validation)."""
        self._refill: asyncio.Task[None] | None = None
        self._closed = False

    async def acquire(self, network: bool, project_writable: bool, overlay: bool) -> Worker:
        """A waiting worker of this kind started under the project's current layout, or a new one."""
        if not network:
            self._kept.add(project_writable)
            layout = tiers.project_layout(self.root)
            waiting = self._workers[project_writable]
            while waiting:
                candidate = waiting.pop(0)
                if candidate.alive and candidate.layout == layout and (candidate.overlay is not None) == overlay:
                    return candidate
                asyncio.get_running_loop().create_task(candidate.discard())
        return await self._spawn(network, project_writable, overlay)

    async def fill(self) -> None:
        for project_writable in self._kinds():
            waiting = self._workers[project_writable]
            while not self._closed and project_writable in self._kept and len(waiting) < self.size:
                waiting.append(await self._spawn(False, project_writable, project_writable and self._overlay()))

    def schedule_refill(self) -> None:
        if self._closed or (self._refill is not None and not self._refill.done()):
            return
        self._refill = asyncio.get_running_loop().create_task(self.fill())

    async def aclose(self) -> None:
        self._closed = True
        if self._refill is not None:
            # Not cancelled: cancelling a half-created subprocess can hang; fill stops after the current spawn.
            with contextlib.suppress(Exception):  # a failed refill spawn only means fewer warm workers to close
                await self._refill

    async def discard_all(self) -> None:
        waiting = [worker for workers in self._workers.values() for worker in workers]
        self._workers = {True: [], False: []}
        await asyncio.gather(*(worker.discard() for worker in waiting), return_exceptions=True)
