"""Pre-started fresh workers kept waiting for runs that are not forked: network runs, writable runs through an overlay
(a fresh mount per run: an overlay caches what it looked up), and every run without fork servers."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from pathlib import Path

from tui_agent.core.sandbox.launch import Launch, project_layout
from tui_agent.core.sandbox.process import Worker

Spawn = Callable[[Launch], Awaitable[Worker]]


class WarmPool:
    """Up to `size` pre-started workers per kept `Launch`; `kinds()` says which offline launches are kept full (they
    can change while tuiagent runs: the overlay may fail, the fork servers may go)."""

    def __init__(self, root: Path, size: int, spawn: Spawn, kinds: Callable[[], tuple[Launch, ...]]) -> None:
        self.root = root
        self.size = size
        self._spawn = spawn
        self._kinds = kinds
        self._workers: list[Worker] = []
        self._used: set[Launch] = set()
        """Read-only kinds join the refill after their first use (catalog validation); writable ones always do."""
        self._refill: asyncio.Task[None] | None = None
        self._closed = False

    async def acquire(self, launch: Launch) -> Worker:
        """A waiting worker started as `launch` under the project's current layout, or a new one (network runs and
        runs with the virtualenv writable always get a new one)."""
        if launch.network or launch.venv_writable:
            return await self._spawn(launch)
        self._used.add(launch)
        layout = project_layout(self.root)
        for candidate in [worker for worker in self._workers if worker.launch == launch]:
            self._workers.remove(candidate)
            if candidate.alive and candidate.layout == layout:
                return candidate
            asyncio.get_running_loop().create_task(candidate.discard())
        return await self._spawn(launch)

    async def fill(self) -> None:
        kinds = self._kinds()
        for stale in [worker for worker in self._workers if worker.launch not in kinds]:
            self._workers.remove(stale)
            asyncio.get_running_loop().create_task(stale.discard())
        for launch in kinds:
            while not self._closed and self._kept(launch) and self._waiting(launch) < self.size:
                self._workers.append(await self._spawn(launch))

    def _kept(self, launch: Launch) -> bool:
        return launch.project_writable or launch in self._used

    def _waiting(self, launch: Launch) -> int:
        return sum(1 for worker in self._workers if worker.launch == launch)

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
        waiting, self._workers = self._workers, []
        await asyncio.gather(*(worker.discard() for worker in waiting), return_exceptions=True)
