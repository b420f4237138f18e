"""openat2(2) with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS: a path opened beneath a folder with no link resolved, by
the kernel in one call (Linux 5.6+, x86_64 and aarch64); projectfs falls back to its own walk elsewhere."""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import sys

SYSCALL_NUMBER = 437  # the same on x86_64 and aarch64 (the generic table)
RESOLVE_NO_SYMLINKS = 0x04
RESOLVE_BENEATH = 0x08
AVAILABLE = sys.platform == "linux" and platform.machine() in ("x86_64", "aarch64")
"""Whether to try it at all; a kernel without it (ENOSYS) or a filter refusing it turns it off for the process."""


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]


_libc: ctypes.CDLL | None = None


def open_beneath(dir_fd: int, relative: str, flags: int, mode: int = 0) -> int:
    """A descriptor of `relative` under `dir_fd`; OSError (ELOOP for a link on the way or at the end, EXDEV for a
    way out, ENOSYS where the kernel lacks openat2) otherwise."""
    global _libc, AVAILABLE
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    how = _OpenHow(flags, mode if flags & (os.O_CREAT | getattr(os, "O_TMPFILE", 0)) else 0,
                   RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH)
    fd = int(_libc.syscall(ctypes.c_long(SYSCALL_NUMBER), ctypes.c_int(dir_fd), os.fsencode(relative),
                           ctypes.byref(how), ctypes.c_size_t(ctypes.sizeof(how))))
    if fd >= 0:
        return fd
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EPERM):
        AVAILABLE = False
    raise OSError(code, os.strerror(code), relative)
