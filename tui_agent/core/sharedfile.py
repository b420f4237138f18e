"""State files several tuiagent processes rewrite (trust.json, mcp-trust.json, preferences): one writer at a time.

Each change is a read-modify-write done inside a `filelock` lock beside the file, written to a fresh temporary file
and moved over the old one (os.replace), so a reader sees the old or the new file, never half of one, and two
processes changing it together both keep their change."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from tui_agent.core.errors import TuiAgentError
from tui_agent.core import projectfs
from typing import Any, TypeVar


LOCK_WAIT_S = 30.0
"""The longest wait for another process's change of the same file (each holds it for milliseconds)."""

T = TypeVar("T")


class SharedFileBusy(TuiAgentError, OSError):
    """Another process held the file's lock longer than LOCK_WAIT_S; the message names the file."""


@contextlib.contextmanager
def locked(path: Path, timeout_s: float = LOCK_WAIT_S, lock_file: Path | None = None) -> Iterator[None]:
    """Hold the lock of `path` (`lock_file`, by default `path.lock` beside it; the kernel releases it if this
    process dies)."""
    from filelock import FileLock, Timeout  # ~60 ms of imports: only a process that changes such a file pays them

    lock_path = lock_file or path.with_name(path.name + ".lock")
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(lock_path), timeout=timeout_s)
    try:
        lock.acquire()
    except Timeout:
        raise SharedFileBusy(f"waited {timeout_s:g} s for {path}: another tuiagent process is changing it") from None
    try:
        yield
    finally:
        lock.release()


@contextlib.contextmanager
def folder_locked(folder: Path, timeout_s: float = LOCK_WAIT_S) -> Iterator[None]:
    """Hold an flock on the folder itself: for files inside a project, where a lock file would show in `git status`."""
    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        wait_for_flock(fd, timeout_s, lambda: SharedFileBusy(
            f"waited {timeout_s:g} s for {folder}: another tuiagent process is changing a file in it"))
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the flock


def wait_for_flock(fd: int, timeout_s: float, busy: Callable[[], Exception], poll_s: float = 0.01) -> None:
    """Take an exclusive flock on `fd` (the kernel releases it even if the process is killed), polling until
    `timeout_s`; raise `busy()` when it does not come."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() > deadline:
                raise busy() from None
            time.sleep(poll_s)



def replace_text(path: Path, text: str, mode: int | None = None) -> None:
    """Write `text` to `path` atomically: a unique temporary file beside it, flushed to disk, then moved over it.
    Its mode is `mode`, else the replaced file's, else what the umask gives a new file."""
    if mode is None:
        try:
            mode = path.stat().st_mode & 0o777
        except OSError:
            mode = 0o666 & ~projectfs.umask()
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def read_json(path: Path) -> Any:
    """The file's JSON value; None when it is missing or not JSON (a broken file reads as empty)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def update_json(path: Path, change: Callable[[Any], tuple[Any, T]], *, indent: int = 1, mode: int | None = 0o600) -> T:
    """Under the lock: read the file's JSON (None if missing or broken), call `change(value)` -> (new value, result),
    write the new value atomically (unless it is unchanged; private, `mode`, by default) and return the result."""
    with locked(path):
        before = read_json(path)
        snapshot = json.dumps(before, sort_keys=True)
        after, result = change(before)
        if json.dumps(after, sort_keys=True) != snapshot:
            replace_text(path, json.dumps(after, indent=indent, sort_keys=True), mode)
        return result
