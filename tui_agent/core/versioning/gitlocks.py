"""Git lock files (`index.lock`, ref locks): tell a lock held by a live process from one left by a killed one, and clear the latter."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tui_agent.core.errors import TuiAgentError

PROC = Path("/proc")
NO_PROC_STALE_AGE_S = 60.0


@dataclass(frozen=True)
class LockInspection:
    """What a lock file is: absent, held by a live process (`holder` says who), or stale."""

    path: Path
    state: str  # "absent" | "live" | "stale"
    holder: str | None = None
    age_s: float = 0.0


def _pids() -> list[int]:
    try:
        return [int(entry.name) for entry in PROC.iterdir() if entry.name.isdigit()]
    except OSError:
        return []


def _pids_with_open_file(target: Path, pids: list[int]) -> list[int]:
    target_text = str(target)
    deleted_text = f"{target_text} (deleted)"
    holders: list[int] = []
    for pid in pids:
        fd_dir = PROC / str(pid) / "fd"
        try:
            for fd in fd_dir.iterdir():
                try:
                    link = os.readlink(fd)
                except OSError:
                    continue
                if link in (target_text, deleted_text):
                    holders.append(pid)
                    break
        except OSError:
            continue
    return holders


def _is_within(path: str, folders: tuple[Path, ...]) -> bool:
    candidate = Path(path)
    return any(candidate == folder or folder in candidate.parents for folder in folders)


def _git_processes_in(folders: tuple[Path, ...], pids: list[int]) -> list[int]:
    own = os.getpid()
    found: list[int] = []
    for pid in pids:
        if pid == own:
            continue
        try:
            comm = (PROC / str(pid) / "comm").read_text().strip()
            if not comm.startswith("git"):
                continue
            cwd = os.readlink(PROC / str(pid) / "cwd")
        except OSError:
            continue
        if _is_within(cwd, folders):
            found.append(pid)
    return found


def inspect_lock(lock: Path, repo_folders: tuple[Path, ...], *, min_stale_age_s: float = 0.0) -> LockInspection:
    """Classify `lock`.

    Live when a process has it open (git and libgit2 keep the lock file open while they write it),
    when a git process works in one of `repo_folders` (git closes the lock while a commit hook runs,
    and git moves to the top of the work tree at start), or when it is younger than
    `min_stale_age_s` (an optional extra margin). Otherwise it was left by a killed process: stale.
    """
    try:
        stat = lock.stat()
    except FileNotFoundError:
        return LockInspection(lock, "absent")
    age = max(0.0, time.time() - stat.st_mtime)
    if not PROC.is_dir():  # no /proc to ask (not Linux): only an old lock is presumed stale
        if age < NO_PROC_STALE_AGE_S:
            return LockInspection(lock, "live", "no /proc to check who holds it", age)
        return LockInspection(lock, "stale", None, age)
    pids = _pids()
    holders = _pids_with_open_file(lock.resolve(), pids)
    if holders:
        return LockInspection(lock, "live", f"process {holders[0]} has it open", age)
    gits = _git_processes_in(tuple(folder.resolve() for folder in repo_folders), pids)
    if gits:
        return LockInspection(lock, "live", f"git process {gits[0]} is running in this repository", age)
    if age < min_stale_age_s:
        return LockInspection(lock, "live", f"it was created {age:.1f}s ago", age)
    return LockInspection(lock, "stale", None, age)


def remove_stale_lock(inspection: LockInspection) -> bool:
    """Remove a lock judged stale, unless it was replaced since it was inspected; True if removed."""
    if inspection.state != "stale":
        return False
    try:
        if time.time() - inspection.path.stat().st_mtime + 0.5 < inspection.age_s:
            return False  # a newer lock took its place
        inspection.path.unlink()
    except FileNotFoundError:
        return False
    return True


LIVE_LOCK_WAIT_S = 10.0
"""How long a catalog commit waits for a lock a running git holds (a person's commit) before deferring."""
POLL_S = 0.05


def wait_while_live(lock: Path, inspect: Callable[[Path], LockInspection], wait_s: float) -> LockInspection:
    """Inspect `lock` until it is not live any more or `wait_s` passed; the last inspection."""
    deadline = time.monotonic() + wait_s
    while True:
        inspection = inspect(lock)
        if inspection.state != "live" or time.monotonic() >= deadline:
            return inspection
        time.sleep(POLL_S)


class IndexBusy(TuiAgentError):
    """index.lock stayed held by a running git for the whole wait; the message says who holds it."""


class IndexLock:
    """git's own `index.lock`, taken as git takes it (created exclusively), so no `git commit`, `git add` or checkout
    changes the index (or starts a commit) between what is read and what is written: `commit(data)` writes the new
    index into the lock and renames it over the index. A live holder is waited for (bounded); a stale lock is
    removed (`removed_stale`); leaving without `commit` removes the lock."""

    def __init__(self, index: Path, inspect: Callable[[Path], LockInspection], wait_s: float = LIVE_LOCK_WAIT_S) -> None:
        self.index = index
        self.path = index.with_name(index.name + ".lock")
        self.inspect = inspect
        self.wait_s = wait_s
        self.removed_stale = False
        self._fd: int | None = None

    def __enter__(self) -> "IndexLock":
        deadline = time.monotonic() + self.wait_s
        while True:
            try:
                self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
                return self
            except FileExistsError:
                inspection = self.inspect(self.path)
                if inspection.state == "stale" and remove_stale_lock(inspection):
                    self.removed_stale = True
                    continue
                if inspection.state == "live" and time.monotonic() >= deadline:
                    raise IndexBusy(f"index.lock is held by a running git ({inspection.holder}); waited "
                                    f"{self.wait_s:g}s") from None
                time.sleep(POLL_S)

    def commit(self, data: bytes) -> None:
        assert self._fd is not None
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view):]
        os.fsync(self._fd)
        os.close(self._fd)
        self._fd = None
        os.rename(self.path, self.index)

    def __exit__(self, *exc: object) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
            self.path.unlink(missing_ok=True)  # ours: never committed, so never renamed away


def git_commits_running(repo_folders: tuple[Path, ...]) -> list[int]:
    """The `git commit` processes working in this repository (a person's commit, perhaps waiting in the editor:
    it holds no lock then, yet moving HEAD under it makes it fail with "cannot lock ref 'HEAD'")."""
    if not PROC.is_dir():
        return []
    found: list[int] = []
    for pid in _git_processes_in(tuple(folder.resolve() for folder in repo_folders), _pids()):
        try:
            argv = (PROC / str(pid) / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"commit" in argv or b"merge" in argv or b"rebase" in argv or b"revert" in argv or b"cherry-pick" in argv:
            found.append(pid)
    return found


def wait_for_commits(repo_folders: tuple[Path, ...], wait_s: float) -> list[int]:
    """Wait until no `git commit` (merge, rebase…) runs in the repository or `wait_s` passed; those still running."""
    deadline = time.monotonic() + wait_s
    while True:
        running = git_commits_running(repo_folders)
        if not running or time.monotonic() >= deadline:
            return running
        time.sleep(POLL_S)
