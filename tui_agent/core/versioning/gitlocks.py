"""Git lock files (`index.lock`, ref locks): tell a lock held by a live process from one left by a killed one, and clear the latter."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

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
