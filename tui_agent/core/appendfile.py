"""Appending a whole record to a file: one write, cut back when it fails part-way (a full disk leaves no half line)."""

from __future__ import annotations

import errno
import os
from pathlib import Path


def append_whole(path: Path, data: bytes) -> None:
    """Append `data` as one write; when it fails part-way (disk full), cut the file back so no half line is left."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        size = os.fstat(fd).st_size
        try:
            if os.write(fd, data) != len(data):
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        except OSError:
            os.ftruncate(fd, size)
            raise
    finally:
        os.close(fd)
