"""A pids cgroup per run, when the machine lets us make one: a real process cap (RLIMIT_NPROC spares root) and a complete kill list."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

V1_PIDS = Path("/sys/fs/cgroup/pids")
V2_ROOT = Path("/sys/fs/cgroup")
SANDBOX_OVERHEAD = 3
"""Processes of the sandbox itself inside the cgroup (bwrap, its pid-1, the worker)."""

_base_cache: dict[str, Path | None] = {}


def _own_path(hierarchy: str) -> str | None:
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _id, controllers, path = line.split(":", 2)
        if (hierarchy == "v2" and controllers == "") or hierarchy in controllers.split(","):
            return path
    return None


def pids_base() -> Path | None:
    """A cgroup folder where this process may create pids-limited children, or None."""
    if "base" in _base_cache:
        return _base_cache["base"]
    base: Path | None = None
    own = _own_path("pids")
    if own is not None and (V1_PIDS / "cgroup.procs").exists():
        candidate = V1_PIDS / own.lstrip("/")
        base = candidate if _can_create(candidate) else None
    if base is not None:
        remove_stale(base)
    _base_cache["base"] = base
    return base


def remove_stale(base: Path) -> None:
    """Remove run cgroups left behind by tuiagent processes that died without closing their sandbox."""
    for folder in base.glob("tuiagent-*-*"):
        owner = folder.name.split("-")[1]
        if owner.isdigit() and not Path(f"/proc/{owner}").exists():
            PidsCgroup(folder).remove()


def _can_create(folder: Path) -> bool:
    probe = folder / f"tuiagent-probe-{os.getpid()}"
    try:
        probe.mkdir()
        (probe / "pids.max").write_text("8")
        probe.rmdir()
        return True
    except OSError:
        try:
            probe.rmdir()
        except OSError:  # it was never created
            pass
        return False


class PidsCgroup:
    """One run's cgroup: its members can never exceed `pids.max` processes, and can all be listed and killed."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def create(cls, name: str, processes: int) -> "PidsCgroup | None":
        base = pids_base()
        if base is None:
            return None
        path = base / name
        try:
            path.mkdir()
            group = cls(path)
            group.set_limit(processes)
            return group
        except OSError:
            return None

    @property
    def procs_file(self) -> Path:
        return self.path / "cgroup.procs"

    def set_limit(self, processes: int, overhead: int = SANDBOX_OVERHEAD) -> None:
        (self.path / "pids.max").write_text(str(max(1, processes) + overhead))

    def members(self) -> list[int]:
        try:
            return [int(line) for line in self.procs_file.read_text().split()]
        except OSError:
            return []

    def kill_all(self, give_up_after_s: float = 0.25) -> int:
        """SIGKILL every member until none is left (or the time is up); returns how many were killed.

        A member usually is a process already exiting: poll quickly first (0.25 ms, doubling up to 5 ms),
        so a run's result is not held back by a fixed sleep.
        """
        killed = 0
        pause = 0.00025
        deadline = time.monotonic() + give_up_after_s
        while True:
            members = [pid for pid in self.members() if pid != os.getpid()]
            if not members or time.monotonic() > deadline:
                break
            for pid in members:  # all stopped first: no shell runs its next command when its child dies first
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGSTOP)
            for pid in members:
                try:
                    os.kill(pid, signal.SIGKILL)
                    killed += 1
                except OSError:  # already gone
                    pass
            time.sleep(pause)
            pause = min(pause * 2, 0.005)
        return killed

    def remove(self) -> None:
        self.kill_all()
        for _attempt in range(40):
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.01)
