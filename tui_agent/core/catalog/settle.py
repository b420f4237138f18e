"""SettleTimers: a hand edit commits once it settles, one commit per burst of saves (`settle_s` after the last).

The edit is validated and live at once; only its commit waits. Nothing is lost if the process dies first: the file
is on disk, and the next start's catch-up commits what differs from HEAD. While a commit waits, the process holds a
watch record (`watching.py`), so another process's start-up catch-up leaves the edit to it."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from tui_agent.core.catalog.watching import WatchRecord

SETTLE_S = 2.0


class SettleTimers:
    """One timer per tool name; `touch` restarts it, `flush` commits now (before a revert or prune, at close)."""

    def __init__(self, commit: Callable[[str, str], Coroutine[Any, Any, None]], settle_s: float = SETTLE_S,
                 cache_dir: Path | None = None) -> None:
        self._commit = commit
        self.settle_s = settle_s
        self._cache_dir = cache_dir
        self._record: WatchRecord | None = None
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._verbs: dict[str, str] = {}
        self._running: dict[str, asyncio.Task[None]] = {}
        self._adopted: dict[str, str] = {}
        """Edits another live process settles (`watching.py`): committed here only before a verb on that tool."""

    def touch(self, name: str, verb: str) -> None:
        """A good version of `name` was saved by hand: commit it `settle_s` after the last save of the burst."""
        timer = self._timers.pop(name, None)
        if timer is not None:
            timer.cancel()
        self._verbs.setdefault(name, self._adopted.pop(name, verb))  # the burst's first save: whether it added the tool
        self._timers[name] = asyncio.get_running_loop().call_later(self.settle_s, self._fire, name)
        if self._record is None and self._cache_dir is not None:
            self._record = WatchRecord.take(self._cache_dir)

    def adopt(self, name: str, verb: str) -> None:
        """Another live process settles this hand edit: `flush(name)` (a save, revert or prune here) commits it
        first; `flush()` at close leaves it to that process."""
        self._adopted[name] = verb

    def forget(self, name: str) -> None:
        """The file is gone or was committed another way: no commit is due any more."""
        timer = self._timers.pop(name, None)
        if timer is not None:
            timer.cancel()
        self._verbs.pop(name, None)
        self._adopted.pop(name, None)
        self._release_if_idle()

    def waiting(self) -> list[str]:
        return sorted(set(self._timers) | set(self._running))

    def _fire(self, name: str) -> None:
        self._timers.pop(name, None)
        verb = self._verbs.pop(name, "update")
        task: asyncio.Task[None] = asyncio.get_running_loop().create_task(self._commit(name, verb))
        self._running[name] = task
        task.add_done_callback(lambda _done: self._done(name, task))

    def _done(self, name: str, task: asyncio.Task[None]) -> None:
        if self._running.get(name) is task:
            self._running.pop(name, None)
        self._release_if_idle()

    def _release_if_idle(self) -> None:
        if self._record is not None and not self._timers and not self._running:
            self._record.release()
            self._record = None

    async def flush(self, name: str | None = None) -> None:
        """Commit now what waits for `name` (or for every tool), and wait for commits already under way."""
        names = [name] if name is not None else list(self._timers)
        for item in names:
            timer = self._timers.pop(item, None)
            adopted = self._adopted.pop(item, None) if name is not None else None
            if timer is not None:
                timer.cancel()
                await self._commit(item, self._verbs.pop(item, "update"))
            elif adopted is not None:
                await self._commit(item, adopted)
        running = [task for item, task in self._running.items() if name is None or item == name]
        for task in running:
            with contextlib.suppress(Exception):
                await task
        self._release_if_idle()
