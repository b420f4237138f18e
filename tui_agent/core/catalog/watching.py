"""Which live processes take this project's hand edits: one flocked file per watching process in `.agent/cache/watchers/`.

A process whose watcher feeds its catalog (the TUI, a headless run, `tuiagent mcp serve`) holds a record while
the watcher runs, and any process holds one while a hand edit's commit waits to settle (`settle.SettleTimers`).
Another process's start-up catch-up asks `live_watchers` and leaves those edits to it, instead of committing them
mid-burst as "changed while tuiagent was not running". The kernel drops the lock when the holder dies, so a killed
TUI never counts as live."""

from __future__ import annotations

import contextlib
import fcntl
import os
import secrets
from pathlib import Path

FOLDER = "watchers"


class WatchRecord:
    """This process's record (`take` it when the watcher starts, `release` it when the watcher stops)."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd

    @classmethod
    def take(cls, cache_dir: Path) -> WatchRecord | None:
        """Hold a record, or None when `.agent/cache` cannot be written (a read-only project commits nothing)."""
        folder = cache_dir / FOLDER
        name = f"{os.getpid()}-{secrets.token_hex(4)}.lock"
        temp = folder / f".{name}"
        try:
            folder.mkdir(parents=True, exist_ok=True)
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        except OSError:
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            os.rename(temp, folder / name)  # locked before it has the name others look for: never taken for stale
        except OSError:
            os.close(fd)
            with contextlib.suppress(OSError):
                temp.unlink()
            return None
        return cls(folder / name, fd)

    def release(self) -> None:
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            self.path.unlink()
        os.close(self._fd)
        self._fd = None


def live_watchers(cache_dir: Path) -> list[int]:
    """The process ids of other live processes holding a record; records of dead processes are removed."""
    try:
        records = sorted((cache_dir / FOLDER).glob("*.lock"))
    except OSError:
        return []
    live: list[int] = []
    for record in records:
        pid_text = record.name.split("-", 1)[0]
        if not pid_text.isdigit() or int(pid_text) == os.getpid():
            continue
        try:
            fd = os.open(record, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            live.append(int(pid_text))  # its holder is alive and watching
        except OSError:
            continue  # (finally closes it) not lockable: whether its holder lives cannot be told, so it stays
        else:
            with contextlib.suppress(OSError):
                record.unlink()  # nobody holds it: its process died without releasing it
        finally:
            os.close(fd)
    return sorted(set(live))  # a process may hold two: its watcher's and its settling commits'
