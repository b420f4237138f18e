"""The project as an overlay run starts (its lower layer is the live project): a stamp of every entry, so the harvest
tells a change someone made during the run from one made before it by comparing, not by file times."""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from tui_agent.core.sandbox.ignored import IgnoredState
from tui_agent.core.sandbox.leftovers import GIT, GIT_COMMIT_FILES

Stamp = tuple[int, int, int, int, int]
"""st_ino, st_mode, st_size, st_mtime_ns, st_ctime_ns: agent code or a person can reset mtime, never ctime."""
WALK_LIMIT = 100_000
"""Entries stamped at most; past it, paths not stamped are judged by their change time (see harvest.py)."""
SKIPPED = frozenset({".git", ".agent"})
"""Top-level folders not stamped (git's objects, tuiagent's own files): judged by their change time."""


@dataclass
class LowerState:
    """`stamps`: project path (relative, POSIX; "" the project itself) → its stamp when the run started; `complete`
    when every entry outside SKIPPED and `ignored` was stamped; `taken_ns`: when the walk began (CLOCK_REALTIME).

    Under the ignored entries the stamps are the ones taken of the ignored files just before (`ignored`: size, mtime,
    ctime), not taken twice: a virtualenv inside the project is walked once per run."""

    stamps: dict[str, Stamp] = field(default_factory=dict)
    complete: bool = True
    taken_ns: int = 0
    ignored: Mapping[str, tuple[int, int, int]] = field(default_factory=dict)
    ignored_roots: frozenset[str] = frozenset()

    def knows(self, relative: str) -> bool:
        """Whether `relative`'s state at the start is known (stamped, or surely absent then)."""
        if relative in self.stamps or relative in self.ignored:
            return True
        return self.complete and relative.split("/", 1)[0] not in SKIPPED and not self._under_ignored(relative)

    def existed(self, relative: str) -> bool:
        return relative in self.stamps or relative in self.ignored

    def matches(self, relative: str, info: os.stat_result) -> bool:
        """Whether `relative`, now `info`, is as it was at the start (False: it was not there)."""
        if relative in self.stamps:
            return self.stamps[relative] == stamp_of(info)
        return self.ignored.get(relative) == (info.st_size, info.st_mtime_ns, info.st_ctime_ns)

    def _under_ignored(self, relative: str) -> bool:
        cut = relative.find("/")
        while cut != -1:
            if relative[:cut] in self.ignored_roots:
                return True
            cut = relative.find("/", cut + 1)
        return relative in self.ignored_roots


def stamp_of(info: os.stat_result) -> Stamp:
    return info.st_ino, info.st_mode, info.st_size, info.st_mtime_ns, info.st_ctime_ns


def take(root: Path, ignored: IgnoredState | None = None, limit: int = WALK_LIMIT) -> LowerState:
    """Stamp every entry under `root` (never following links) up to `limit` entries, but for the ignored entries
    `ignored` walked (their files' stamps are taken from it)."""
    roots = frozenset(entry.rstrip("/") for entry in ignored.roots) if ignored is not None else frozenset()
    state = LowerState(taken_ns=time.time_ns(), ignored=ignored.files if ignored is not None else {},
                       ignored_roots=roots)
    try:
        state.stamps[""] = stamp_of(os.lstat(root))
    except OSError:
        state.complete = False
        return state
    pending = [("", str(root))]
    while pending:
        relative, folder = pending.pop()
        try:
            with os.scandir(folder) as found:
                entries = list(found)
        except OSError:  # gone meanwhile, or unreadable: its entries are judged by their change time
            state.complete = False
            continue
        for entry in entries:
            if not relative and entry.name in SKIPPED:
                continue
            if len(state.stamps) >= limit:
                state.complete = False
                return state
            path = f"{relative}/{entry.name}" if relative else entry.name
            if path in roots:
                continue
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            state.stamps[path] = stamp_of(info)
            if entry.is_dir(follow_symlinks=False):
                pending.append((path, entry.path))
    _stamp_git_commit_files(root, state)
    return state


GIT_STAMPED_FOLDERS = ("refs", "logs")
GIT_STAMP_LIMIT = 10_000


def _stamp_git_commit_files(root: Path, state: LowerState) -> None:
    """Stamp what a commit writes in the project's `.git` (index, HEAD, refs, logs; not the objects, which are new
    when written): the harvest then tells the person's git work during the run from what the run's commit changed
    by comparing, not by change times (a commit applied just before the run started is not "during" it)."""
    git = root / GIT
    try:
        if not git.is_dir() or git.is_symlink():
            return
    except OSError:
        return
    for name in GIT_COMMIT_FILES:
        try:
            state.stamps[f"{GIT}/{name}"] = stamp_of(os.lstat(git / name))
        except OSError:
            continue
    count = 0
    for folder in GIT_STAMPED_FOLDERS:
        for current, folders, files in os.walk(git / folder):  # os.walk follows no link by default
            for name in [*folders, *files]:
                path = Path(current) / name
                try:
                    state.stamps[path.relative_to(root).as_posix()] = stamp_of(os.lstat(path))
                except OSError:
                    continue
                count += 1
                if count >= GIT_STAMP_LIMIT:
                    return
