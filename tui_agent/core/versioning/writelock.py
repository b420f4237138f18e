"""WriterLock: one writer at a time across processes for `.agent/` (write + commit, startup catch-up), an flock in `.agent/cache/`."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import fcntl
import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

WRITER_LOCK_FILE = ".agent/cache/writer.lock"
POLL_S = 0.005


class WriterLock:
    """Held around "read the file, decide, write it, commit it" by every store of every process (a TUI, the CLI,
    `tuiagent -p`), so another process never sees a half-done change. The kernel releases it if the holder dies.

    `hold()` is for async code (it polls, so cancelling a waiter never leaves the lock taken); `held()` blocks, for
    code already in a worker thread. Not re-entrant: take it once, at the outermost store operation."""

    def __init__(self, root: Path) -> None:
        self.path = Path(root) / WRITER_LOCK_FILE

    def _open(self) -> int | None:
        """The lock file's descriptor; None on a read-only project, where no process can write, so none to wait for."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            return os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as error:
            if error.errno not in (errno.EROFS, errno.EACCES, errno.EPERM):
                raise
        try:
            return os.open(self.path, os.O_RDONLY)  # flock works on a read-only descriptor too
        except OSError:
            return None

    @contextlib.asynccontextmanager
    async def hold(self) -> AsyncIterator[None]:
        fd = self._open()
        if fd is None:
            yield
            return
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    await asyncio.sleep(POLL_S)
            yield
        finally:
            os.close(fd)  # closing the descriptor releases the flock

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        fd = self._open()
        if fd is None:
            yield
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)
