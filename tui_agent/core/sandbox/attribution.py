"""What each writable run wrote in the project, for undo: exactly (an overlay run's upper folder) or unknown."""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass
from pathlib import Path

from tui_agent.core.sandbox.harvest import Harvest, harvest
from tui_agent.core.sandbox.lowerstate import LowerState
from tui_agent.core.sandbox.overlay import OverlayDirs

PER_CALL_ONLY = ("without an overlay mount, what a run wrote cannot be told apart from what someone else changed "
                 "while it ran: undo attributes changes per call only")


@dataclass(frozen=True)
class RunWrites:
    """One writable run: `attributed` when `paths` (project paths, relative, POSIX) are exactly what it created,
    changed or removed; `kept` are paths it also wrote that someone else changed meanwhile (theirs kept)."""

    attributed: bool
    paths: tuple[str, ...] = ()
    kept: tuple[str, ...] = ()
    aside: tuple[tuple[str, str], ...] = ()
    """(path, where the run's version is) for each of `kept` the run had changed rather than deleted."""


def collect(dirs: OverlayDirs, root: Path, cache_dir: Path, since_ns: int, start: LowerState | None = None) -> Harvest:
    """Apply the run's upper folder onto the project (the overlay is unmounted: its processes are gone); the caller
    deletes the overlay's folders. `start`: the project's stamps as the run started (None after a crash).
    A run's version that cannot be applied goes to `.agent/cache/run-versions/<run>/`."""
    aside = cache_dir / "run-versions" / f"{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}"
    return harvest(dirs.upper, root, since_ns=since_ns, aside=aside, rootless=dirs.rootless, start=start)


def writes_of(found: Harvest) -> RunWrites:
    return RunWrites(True, tuple(found.paths), tuple(found.kept), tuple(found.aside))
