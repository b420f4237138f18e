"""Overlay mounts for writable bubblewrap runs: the project is mounted as an overlay whose upper folder lies outside it,
so what a run wrote is exactly what its upper folder holds (`harvest.py` applies it); see `sandbox status`."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

MOUNT_FAILED = 125
"""The launcher's exit status when the overlay could not be mounted (the worker never started; `launch.py` mounts it)."""

_UNSAFE = (",", ":", "\\", "\n", '"')
"""Characters the mount options cannot carry unescaped: such paths get no overlay (per-call attribution only)."""


@dataclass(frozen=True)
class OverlayDirs:
    """One worker's overlay folders: `upper` receives everything the run writes; `work` is the kernel's."""

    folder: Path
    rootless: bool

    @property
    def upper(self) -> Path:
        return self.folder / "upper"

    @property
    def work(self) -> Path:
        return self.folder / "work"

    def remove(self) -> None:
        """Delete the folders (the kernel's work folder may be mode 000 for a user without privileges)."""
        for inner in (self.work / "work", self.work / "index"):
            with contextlib.suppress(OSError):
                os.chmod(inner, 0o700)
        shutil.rmtree(self.folder, ignore_errors=True)


def rootless() -> bool:
    return os.geteuid() != 0


def prepare(scratch: Path) -> OverlayDirs:
    """Fresh upper and work folders under `scratch` (outside the project, as the kernel requires)."""
    folder = Path(tempfile.mkdtemp(prefix="overlay-", dir=scratch))
    dirs = OverlayDirs(folder, rootless())
    dirs.upper.mkdir()
    dirs.work.mkdir()
    return dirs


def usable_paths(project: Path, scratch: Path) -> bool:
    return not any(mark in str(path) for path in (project, scratch) for mark in _UNSAFE)
