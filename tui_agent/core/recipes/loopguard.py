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


@dataclass
class _RecipeWindow:
    running: bool = False
    ended_at: float | None = None
    own_changes: set[str] = field(default_factory=set)
    dispatches: deque[float] = field(default_factory=deque)
    paused_until: float | None = None


class LoopGuard:
    """Decides which changes are a recipe's own echo and when a recipe fires too often.

    Two layers:
    - attribution: recipes run one at a time, so a change that arrives while R runs, or within `grace_s` after
      R ended (watchers report with some latency) and before any other recipe started, is R's own write. It
      never re-triggers R (other recipes still see it). The engine reports it once per run with a Notice.
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
    ) -> None:
        self.grace_s = grace_s
        self.max_runs = max_runs
        self.window_s = window_s
        self.cooldown_s = cooldown_s
        self.clock = clock
        self._windows: dict[str, _RecipeWindow] = {}
        self._last_run: str | None = None

    def _window(self, name: str) -> _RecipeWindow:
        return self._windows.setdefault(name, _RecipeWindow())

    def run_started(self, name: str) -> None:
        window = self._window(name)
        window.running = True
        window.own_changes = set()
        self._last_run = name

    def run_finished(self, name: str) -> None:
        window = self._window(name)
        window.running = False
        window.ended_at = self.clock()

    def is_own_change(self, name: str, path: str) -> bool:
        """Whether a change of `path` (already known to match R's trigger) is R's own write; records it if so."""
        window = self._windows.get(name)
        if window is None or self._last_run != name:
            return False
        within_grace = window.ended_at is not None and self.clock() - window.ended_at <= self.grace_s
        if window.running or within_grace:
            window.own_changes.add(path)
            return True
        return False

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
