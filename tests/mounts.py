"""Helpers for tests (no tests here): real small filesystems (tmpfs) to fill up, and real read-only bind mounts.

`chmod a-w` does not stop root, so read-only means a mount flag. Everything mounted here is unmounted after the test."""

from __future__ import annotations

import contextlib
import os
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest


def can_mount() -> bool:
    if os.geteuid() != 0:
        return False
    return subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode == 0


needs_mount = pytest.mark.skipif(not can_mount(), reason="needs root and mount namespaces (read-only bind / tmpfs)")


@contextlib.contextmanager
def tmpfs(parent: Path, size: str = "3m", inodes: int | None = None) -> Iterator[Path]:
    """A tmpfs of `size` (and at most `inodes` files and folders) mounted in a new folder under `parent`, removed
    afterwards."""
    mount_point = parent / f"disk-{uuid.uuid4().hex[:6]}"
    mount_point.mkdir()
    options = f"size={size}" + (f",nr_inodes={inodes}" if inodes is not None else "")
    subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(mount_point)], check=True)
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=False)


def fill(disk: Path, leave_bytes: int) -> None:
    """Fill `disk` (a tmpfs) with one file until writes fail, then give back `leave_bytes`."""
    filler = disk / "filler"
    filler.unlink(missing_ok=True)
    with open(filler, "wb", buffering=0) as handle:
        try:
            while True:
                handle.write(b"\0" * 4096)
        except OSError:  # full
            pass
    os.truncate(filler, max(0, filler.stat().st_size - leave_bytes))


def free(disk: Path) -> None:
    (disk / "filler").unlink(missing_ok=True)


def use_up_inodes(disk: Path) -> None:
    """Create empty files on `disk` (a tmpfs with `inodes`) until no new file can be made: existing files can still
    grow, but every new file or folder fails with ENOSPC."""
    fillers = disk / "fillers"
    fillers.mkdir()
    with contextlib.suppress(OSError):
        for n in range(1_000_000):
            (fillers / str(n)).touch()


@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[Path]:
    """Bind-mount `folder` onto itself read-only (in this mount namespace) until the block ends."""
    subprocess.run(["mount", "--bind", str(folder), str(folder)], check=True)
    try:
        subprocess.run(["mount", "-o", "remount,ro,bind", str(folder)], check=True)
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)
