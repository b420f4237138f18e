"""Loop protection for file_changed recipes: a recipe's own writes never re-trigger it, and runaway recipes are throttled."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

DEFAULT_GRACE_S = 1.5
DEFAULT_MAX_RUNS = 6
DEFAULT_WINDOW_S = 10.0
DEFAULT_COOLDOWN_S = 30.0


MTIME_SLACK_S = 0.02
"""File timestamps come from a coarse kernel clock: a write at the very start of a run can look a little older."""


@dataclass
class _RecipeWindow:
    running: bool = False
    ended_at: float | None = None
    wall_started: float = 0.0
    wall_ended: float | None = None
    own_changes: set[str] = field(default_factory=set)
    dispatches: deque[float] = field(default_factory=deque)
    paused_until: float | None = None


class LoopGuard:
    """Decides which changes are a recipe's own echo and when a recipe fires too often.

    Two layers:
    - attribution: recipes run one at a time, so a change that arrives while R runs, or within `grace_s` after
      R ended (watchers report with some latency) and before any other recipe started, may be R's own write.
      When the file still exists, its modification time decides: written between R's start and end → R's own
      write; written after R ended → a person's edit, which does fire R. An own write never re-triggers R
      (other recipes still see it); the engine reports it once per run with a Notice.
    - throttling: a recipe dispatched more than `max_runs` times within `window_s` seconds (a ping-pong
      between two recipes, or a tool writing in the background) is paused for `cooldown_s`, with a warning.
    """

    def __init__(
        self,
        *,
        grace_s: float = DEFAULT_GRACE_S,
        max_runs: int = DEFAULT_MAX_RUNS,
        window_s: float = DEFAULT_WINDOW_S,
        cooldown_s: float = DEFAULT_COOLDOWN_S,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self.grace_s = grace_s
        self.max_runs = max_runs
        self.window_s = window_s
        self.cooldown_s = cooldown_s
        self.clock = clock
        self.wall_clock = wall_clock
        self._windows: dict[str, _RecipeWindow] = {}
        self._last_run: str | None = None

    def _window(self, name: str) -> _RecipeWindow:
        return self._windows.setdefault(name, _RecipeWindow())

    def run_started(self, name: str) -> None:
        window = self._window(name)
        window.running = True
        window.own_changes = set()
        window.wall_started = self.wall_clock()
        window.wall_ended = None
        self._last_run = name

    def run_finished(self, name: str) -> None:
        window = self._window(name)
        window.running = False
        window.ended_at = self.clock()
        window.wall_ended = self.wall_clock()

    def is_own_change(self, name: str, path: str, mtime: float | None = None) -> bool:
        """Whether a change of `path` (already known to match R's trigger) is R's own write; records it if so.
        `mtime` is the file's modification time (wall clock), None when the file is gone."""
        window = self._windows.get(name)
        if window is None or self._last_run != name:
            return False
        within_grace = window.ended_at is not None and self.clock() - window.ended_at <= self.grace_s
        if not (window.running or within_grace):
            return False
        if mtime is not None and window.wall_ended is not None and mtime > window.wall_ended:
            return False
        if mtime is not None and mtime < window.wall_started - MTIME_SLACK_S:
            return False
        window.own_changes.add(path)
        return True

    def take_own_changes(self, name: str) -> list[str]:
        """The own writes recorded since the last call (for one Notice per run), sorted."""
        window = self._windows.get(name)
        if window is None or not window.own_changes:
            return []
        changes = sorted(window.own_changes)
        window.own_changes = set()
        return changes

    def allow_dispatch(self, name: str) -> tuple[bool, str | None]:
        """Record a dispatch of R; returns (allowed, message). The message is set when R just got paused."""
        window = self._window(name)
        now = self.clock()
        if window.paused_until is not None:
            if now < window.paused_until:
                return False, None
            window.paused_until = None
            window.dispatches.clear()
        while window.dispatches and now - window.dispatches[0] > self.window_s:
            window.dispatches.popleft()
        if len(window.dispatches) >= self.max_runs:
            window.paused_until = now + self.cooldown_s
            return False, (
                f"recipe {name} fired {len(window.dispatches) + 1} times within {self.window_s:g} s, which looks like a loop "
                f"(its action, or another recipe's, keeps changing the files it watches): paused for {self.cooldown_s:g} s"
            )
        window.dispatches.append(now)
        return True, None

    def paused(self, name: str) -> bool:
        window = self._windows.get(name)
        return window is not None and window.paused_until is not None and self.clock() < window.paused_until

    def forget(self, name: str) -> None:
        self._windows.pop(name, None)
        if self._last_run == name:
            self._last_run = None
