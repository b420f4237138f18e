"""WriterLock: one writer at a time across processes for `.agent/` (write + commit, startup catch-up), an flock in `.agent/cache/`."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import fcntl
import os
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

from tui_agent.core import projectfs
from tui_agent.core.errors import PipelineError

WRITER_LOCK_FILE = ".agent/cache/writer.lock"
POLL_S = 0.005
WAIT_S = 360.0
"""The longest wait for another writer: longer than a commit with its hooks (HOOK_TIMEOUT_S = 300 s)."""


class LockTimeout(PipelineError):
    """Another writer held the lock longer than the wait allows; the message names the lock and its holder."""


class WriterLock:
    """Held around "read the file, decide, write it, commit it" by every store of every process (a TUI, the CLI,
    `tuiagent -p`), so another process never sees a half-done change. The kernel releases it if the holder dies.

    `hold()` is for async code (it polls, so cancelling a waiter never leaves the lock taken); `held()` blocks, for
    code already in a worker thread. Not re-entrant: take it once, at the outermost store operation. Both wait at
    most `timeout_s` and then raise LockTimeout naming the lock and the process holding it."""

    def __init__(self, root: Path) -> None:
        self.path = Path(root) / WRITER_LOCK_FILE

    def _open(self) -> int | None:
        """The lock file's descriptor; None on a read-only project, where no process can write, so none to wait for."""
        try:
            return projectfs.open_file(self.path, os.O_RDWR | os.O_CREAT, 0o644)  # no link in .agent/ followed
        except OSError as error:
            if error.errno not in (errno.EROFS, errno.EACCES, errno.EPERM):
                raise
        try:
            return projectfs.open_file(self.path, os.O_RDONLY)  # flock works on a read-only descriptor too
        except OSError:
            return None

    def _try(self, fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        with contextlib.suppress(OSError):  # who holds it, for the message of a process that waits too long
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"pid {os.getpid()} ({' '.join(sys.argv[:3])[:120]})".encode(), 0)
        return True

    def _timeout(self, fd: int, waited: float) -> LockTimeout:
        try:
            holder = os.pread(fd, 200, 0).decode("utf-8", "replace").strip()
        except OSError:
            holder = ""
        return LockTimeout("write", f"waited {waited:.0f} s for {WRITER_LOCK_FILE}, held by another tuiagent process "
                                    f"({holder or 'unknown'}) that is writing or committing the catalog; nothing was "
                                    "changed: try again once it is done")

    @contextlib.asynccontextmanager
    async def hold(self, timeout_s: float = WAIT_S) -> AsyncIterator[None]:
        fd = self._open()
        if fd is None:
            yield
            return
        try:
            started = time.monotonic()
            while not self._try(fd):
                if time.monotonic() - started > timeout_s:
                    raise self._timeout(fd, time.monotonic() - started)
                await asyncio.sleep(POLL_S)
            yield
        finally:
            os.close(fd)  # closing the descriptor releases the flock

    @contextlib.contextmanager
    def held(self, timeout_s: float = WAIT_S) -> Iterator[None]:
        fd = self._open()
        if fd is None:
            yield
            return
        try:
            started = time.monotonic()
            while not self._try(fd):
                if time.monotonic() - started > timeout_s:
                    raise self._timeout(fd, time.monotonic() - started)
                time.sleep(POLL_S * 4)
            yield
        finally:
            os.close(fd)
