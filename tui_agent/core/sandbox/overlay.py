"""Overlay mounts for writable bubblewrap runs: the project is mounted as an overlay whose upper folder lies outside it,
so what a run wrote is exactly what its upper folder holds (`harvest.py` applies it); see `sandbox status`."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

MOUNT_FAILED = 125
"""The launcher's exit status when the overlay could not be mounted (the worker never started)."""

_SCRIPT = 'mount -t overlay overlay -o "$1" "$2" || exit 125; shift 2; exec "$@"'
_UNSAFE = (",", ":", "\\", "\n", '"')
"""Characters the mount options cannot carry unescaped: such paths get no overlay (per-call attribution only)."""

_probe_lock = threading.Lock()
_probe_cache: dict[str, str | None] = {}


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


def launcher(dirs: OverlayDirs, project: Path) -> list[str]:
    """The command prefix that mounts the overlay over `project` in a new mount namespace (a new user namespace too,
    mapped to the caller, without privileges), then execs the rest of the command line (bubblewrap)."""
    binary = shutil.which("unshare") or "unshare"
    options = f"lowerdir={project},upperdir={dirs.upper},workdir={dirs.work},volatile"
    if dirs.rootless:
        options = "userxattr," + options
    user = ["--user", "--map-root-user"] if dirs.rootless else []
    return [binary, "--mount", "--propagation", "private", *user, "--", "/bin/sh", "-c", _SCRIPT, "overlay",
            options, str(project)]


def usable_paths(project: Path, scratch: Path) -> bool:
    return not any(mark in str(path) for path in (project, scratch) for mark in _UNSAFE)


def probe(scratch: Path) -> str | None:
    """None when an overlay can be mounted here the way runs mount it (tried once per process), else why not."""
    with _probe_lock:
        if "result" in _probe_cache:
            return _probe_cache["result"]
        _probe_cache["result"] = _try_mount(scratch)
        return _probe_cache["result"]


def _try_mount(scratch: Path) -> str | None:
    if shutil.which("unshare") is None:
        return "util-linux's `unshare` is not installed"
    if not usable_paths(Path("/"), scratch):
        return f"the temporary folder {scratch} has characters a mount option cannot carry"
    trial = Path(tempfile.mkdtemp(prefix="overlay-probe-", dir=scratch))
    try:
        lower = trial / "lower"
        lower.mkdir()
        (lower / "f").write_text("x")
        dirs = prepare(trial)
        command = [*launcher(dirs, lower), "/bin/sh", "-c", f'rm "{lower}/f" && echo y > "{lower}/g"']
        try:
            done = subprocess.run(command, capture_output=True, timeout=10, env={"PATH": "/usr/bin:/bin"})
        except (OSError, subprocess.TimeoutExpired) as error:
            return f"an overlay mount fails here: {error}"
        if done.returncode != 0:
            why = done.stderr.decode(errors="replace").strip() or f"exit status {done.returncode}"
            return f"an overlay mount fails here: {why}"
        if not (dirs.upper / "g").is_file() or (lower / "g").exists() or not (lower / "f").exists():
            return "an overlay mount does not keep writes apart here"
        return None
    finally:
        for inner in trial.glob("overlay-*/work/work"):
            with contextlib.suppress(OSError):
                os.chmod(inner, 0o700)
        shutil.rmtree(trial, ignore_errors=True)
