"""Temporary folders named after the process that owns them, and the sweep of those whose process is gone."""

from __future__ import annotations

import os
import re
import shutil
import stat
import tempfile
import threading
from pathlib import Path

_OWNED = re.compile(r"tuiagent-[a-z]+(?:-[a-z]+)*-(\d+)-[^/]+")
"""`tuiagent-<kind>-<pid>-<random>`: what `owned_temp` creates (kinds are lower-case words joined by dashes)."""
_swept: list[str] = []
_lock = threading.Lock()


def owned_temp(kind: str, parent: Path | None = None) -> Path:
    """A fresh folder `tuiagent-<kind>-<pid>-…` in the temporary folder (or `parent`), private to this user."""
    return Path(tempfile.mkdtemp(prefix=f"tuiagent-{kind}-{os.getpid()}-", dir=parent))


AWAITING_RECOVERY = "awaiting-recovery"
"""A file an overlay run's folder holds while a project record names it (sandbox/writable_runs.py): what the run
wrote is applied at that project's next start, so no other process's sweep may remove it first."""


def awaits_recovery(folder: Path) -> bool:
    """Whether a folder of a dead process holds an overlay whose writes its project has not recovered yet."""
    try:
        return any((child / AWAITING_RECOVERY).exists() for child in folder.iterdir()
                   if child.is_dir() and not child.is_symlink())
    except OSError:
        return True  # unreadable: keep it rather than lose a run's writes


def sweep_once() -> list[str]:
    """`sweep()` of the temporary folder, the first time a process asks (later calls return [])."""
    with _lock:
        folder = tempfile.gettempdir()
        if folder in _swept:
            return []
        _swept.append(folder)
    return sweep(Path(folder))


def sweep(folder: Path) -> list[str]:
    """Remove the `owned_temp` folders in `folder` that this user owns and whose process no longer exists;
    the names of those removed. Links, other users' folders and a live process's folder are never touched."""
    removed: list[str] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    me = os.getuid()
    for entry in entries:
        match = _OWNED.fullmatch(entry.name)
        if match is None or int(match.group(1)) == os.getpid():
            continue
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != me or _alive(int(match.group(1))):
            continue
        if awaits_recovery(Path(entry.path)):
            continue  # a killed run's overlay: its project's next start applies what it wrote, then removes it
        if _remove(Path(entry.path)):
            removed.append(entry.name)
    return removed


def _alive(pid: int) -> bool:
    if pid <= 0:
        return True  # not a name this module wrote: leave it
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, another user's: not ours to judge
    return not _zombie(pid)


def _zombie(pid: int) -> bool:
    """A killed process its parent has not reaped yet: gone for what it owned."""
    try:
        status = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return status.rpartition(")")[2].split()[:1] == ["Z"]


def _remove(path: Path) -> bool:
    """Delete `path` (links inside are removed, never followed); folders left without write or search permission
    (an overlay's kernel work folder is mode 000) are opened up first."""
    def opened_up(_function: object, failed: str, _error: object) -> None:
        parent = os.path.dirname(failed)
        for target in (parent, failed):
            try:
                if not os.path.islink(target):
                    os.chmod(target, 0o700)
            except OSError:
                pass
        try:
            if os.path.isdir(failed) and not os.path.islink(failed):
                shutil.rmtree(failed, ignore_errors=True)
            else:
                os.unlink(failed)
        except OSError:
            pass

    _open_folders(path)
    shutil.rmtree(path, onerror=opened_up)
    return not os.path.lexists(path)


def _open_folders(top: Path) -> None:
    """chmod u+rwx every folder under `top` that lacks it (a mode-000 folder cannot be listed, so walk top-down)."""
    pending = [str(top)]
    while pending:
        current = pending.pop()
        try:
            mode = os.lstat(current).st_mode
            if not stat.S_ISDIR(mode):
                continue
            if mode & 0o700 != 0o700:
                os.chmod(current, stat.S_IMODE(mode) | 0o700)
            pending += [entry.path for entry in os.scandir(current)
                        if entry.is_dir(follow_symlinks=False)]
        except OSError:
            continue
