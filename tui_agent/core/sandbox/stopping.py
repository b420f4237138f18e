"""The one place a run's processes are held and stopped: its cgroup's `cgroup.kill`, else its PID namespace, else its session.

A run gets its own cgroup when the machine lets us make one (`RunCgroup`: a folder of the same name in the v2
hierarchy, which has `cgroup.kill`, and in the pids hierarchy, which caps it; on a hybrid machine those differ).
A stop uses the strongest mechanism the run has:

1. `cgroup.kill` (Linux 5.14+): the kernel SIGKILLs every member at once; nothing can leave a cgroup, so a
   double-forked daemon, a fork bomb, a new session or a process ignoring SIGTERM all go with it;
2. bubblewrap's PID namespace: SIGKILL to its init (bubblewrap's only child) makes the kernel kill all of it;
3. the weak tier without either: `kill_tree`, a /proc scan for the run's session, process group, marked environment
   and descendants, stopped then killed until none is left (a process that left the session, cleared its environment
   and was orphaned escapes it: `tuiagent sandbox status` says so).

A stop never waits for the processes to exit (but for a namespace's init: milliseconds); `RunProcesses.release`
(after the leader exited) does, for as long as removing the cgroup needs.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import select
import signal
import time
from dataclasses import dataclass
from pathlib import Path

V1_PIDS = Path("/sys/fs/cgroup/pids")
SANDBOX_OVERHEAD = 3
"""Processes of the sandbox itself inside the cgroup (bwrap, its pid-1, the worker)."""
MARKER_VARIABLE = b"TUIAGENT_SANDBOX_RUN="
"""The weak tier's mark on every process of a run (its environment): what the session scan looks for."""
EMPTY_WAIT_S = 1.0
"""How long `RunCgroup.remove` waits for killed members to finish exiting (they go within milliseconds)."""
NAMESPACE_EXIT_WAIT_S = 2.0
"""How long a stop waits for a killed namespace init to exit (it waits for the rest of its namespace to die)."""

_base_cache: dict[str, Path | None] = {}


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _own_path(hierarchy: str) -> str | None:
    """This process's cgroup in `hierarchy` ("v2", or a v1 controller such as "pids")."""
    for line in _read(Path("/proc/self/cgroup")).splitlines():
        number, controllers, path = line.split(":", 2)
        if (hierarchy == "v2" and number == "0" and controllers == "") or hierarchy in controllers.split(","):
            return path
    return None


def _v2_mount() -> Path | None:
    """Where the cgroup v2 hierarchy is mounted (/sys/fs/cgroup, or /sys/fs/cgroup/unified on a hybrid machine)."""
    for line in _read(Path("/proc/self/mountinfo")).splitlines():
        fields, _, rest = line.partition(" - ")
        if rest.split()[:1] == ["cgroup2"]:
            return Path(fields.split()[4])
    return None


def _settle(kind: str, base: Path | None, needed: str) -> Path | None:
    """Cache `base` for `kind` when this process may create children there that have `needed` (else None), once the
    run cgroups left there by a tuiagent that died without closing its sandbox are removed."""
    usable = None
    with contextlib.suppress(OSError):
        if base is not None:
            probe = base / f"tuiagent-probe-{os.getpid()}"
            probe.mkdir()
            found = (probe / needed).exists()
            probe.rmdir()
            usable = base if found else None
    _base_cache[kind] = usable
    for stale in usable.glob("tuiagent-*-*") if usable is not None else []:
        owner = stale.name.split("-")[1]
        if owner.isdigit() and not Path(f"/proc/{owner}").exists():
            RunCgroup([stale], kill=stale if (stale / "cgroup.kill").exists() else None).remove()
    return usable


def kill_base() -> Path | None:
    """A cgroup v2 folder where this process may create children that have `cgroup.kill` (Linux 5.14+), or None."""
    if "kill" not in _base_cache:
        mount, own = _v2_mount(), _own_path("v2")
        return _settle("kill", mount / own.lstrip("/") if mount is not None and own is not None else None, "cgroup.kill")
    return _base_cache["kill"]


def pids_base() -> Path | None:
    """A cgroup folder where this process may create pids-limited children, or None."""
    if "pids" not in _base_cache:
        own, killing, base = _own_path("pids"), kill_base(), None  # kill_base first: its stale twins go killed
        if own is not None and (V1_PIDS / "cgroup.procs").exists():
            base = V1_PIDS / own.lstrip("/")
        elif killing is not None and "pids" in _read(killing / "cgroup.subtree_control").split():
            base = killing  # cgroup v2 only: the pids controller is delegated to our children
        return _settle("pids", base, "pids.max")
    return _base_cache["pids"]


class RunCgroup:
    """One run's cgroup (one folder per hierarchy): its members can be killed at once, capped at `pids.max`."""

    def __init__(self, folders: list[Path], *, kill: Path | None = None, limit: Path | None = None) -> None:
        self.folders = folders
        self.kill_folder = kill
        self.limit_folder = limit

    @classmethod
    def create(cls, name: str, processes: int) -> "RunCgroup | None":
        """A new run cgroup in every hierarchy that allows one (None when none does); capped when pids is there."""
        killing, limiting = kill_base(), pids_base()
        group = cls([], kill=killing / name if killing else None, limit=limiting / name if limiting else None)
        for folder in dict.fromkeys(f for f in (group.kill_folder, group.limit_folder) if f is not None):
            try:
                folder.mkdir()
            except OSError:
                group.remove()
                return None
            group.folders.append(folder)
        group.set_limit(processes)
        return group if group.folders else None

    @property
    def procs_files(self) -> list[Path]:
        """The `cgroup.procs` files a process joins the run through (one per hierarchy)."""
        return [folder / "cgroup.procs" for folder in self.folders]

    def set_limit(self, processes: int) -> None:
        if self.limit_folder is not None:
            (self.limit_folder / "pids.max").write_text(str(max(1, processes) + SANDBOX_OVERHEAD))

    def kill(self) -> bool:
        """SIGKILL every member at once, and whatever they fork meanwhile (the kernel's `cgroup.kill`); False when
        this cgroup has no `cgroup.kill` (or it is gone)."""
        try:
            return self.kill_folder is not None and (self.kill_folder / "cgroup.kill").write_text("1") > 0
        except OSError:
            return False

    def remove_if_empty(self) -> bool:
        """Remove every folder at once when the run left nothing in them (the usual case); False when one still has
        members (EBUSY), which `remove` then kills and waits for."""
        for folder in self.folders:
            try:
                folder.rmdir()
            except FileNotFoundError:
                continue
            except OSError:
                return False
        return True

    def remove(self) -> None:
        """Kill what is left, wait (briefly) until the members have exited, and remove every folder."""
        self.kill()
        deadline, pause = time.monotonic() + EMPTY_WAIT_S, 0.0002
        while not self.remove_if_empty() and time.monotonic() < deadline:  # a killed member is still exiting
            time.sleep(pause)
            pause = min(pause * 2, 0.01)


@dataclass
class RunProcesses:
    """What identifies a run's processes: the process tuiagent started, its cgroup, and whether it is bubblewrap."""

    leader: int
    """The host pid tuiagent started (bubblewrap, or the weak tier's worker)."""
    cgroup: RunCgroup | None
    namespace: bool
    """The leader is bubblewrap with its own PID namespace: its only child is that namespace's init."""
    token: str = ""
    """The weak tier's marker (TUIAGENT_SANDBOX_RUN) in the run's environment."""

    async def stop(self, *, leader_alive: bool = True) -> None:
        """SIGKILL every process of the run now (the weak tier's /proc scan off the event loop); `leader_alive`: the
        leader is tuiagent's child, not reaped yet (its pid cannot have been reused)."""
        if self.cgroup is not None and self.cgroup.kill():
            if leader_alive:
                _kill(self.leader)  # a leader still starting may not have joined its cgroup yet
        elif self.namespace:
            if leader_alive:  # else bubblewrap exited after its child, the namespace's init: it is gone already
                kill_namespace(self.leader)
        else:
            await asyncio.to_thread(kill_tree, self.leader, self.token, root_alive=leader_alive)

    async def release(self) -> None:
        """After the leader exited: nothing the run started outlives it, and its cgroup is removed."""
        if not self.namespace and (self.cgroup is None or self.cgroup.kill_folder is None):  # the weak tier's scan
            await asyncio.to_thread(kill_tree, self.leader, self.token, root_alive=False)
        if self.cgroup is not None and not self.cgroup.remove_if_empty():
            await asyncio.to_thread(self.cgroup.remove)


def kill_namespace(leader: int) -> None:
    """SIGKILL the namespace's init (bubblewrap `leader`'s only child; the kernel then kills all of it), wait until it
    has exited, then SIGKILL bubblewrap. The init exits only once every other process of its namespace is gone:
    without the wait, bubblewrap's exit could be seen while a killed daemon of the run still ran for a moment."""
    for child in _read(Path(f"/proc/{leader}/task/{leader}/children")).split():
        try:
            pidfd = os.pidfd_open(int(child))
        except OSError:
            continue
        try:
            fields = _stat_fields(child)
            if fields is not None and int(fields[1]) == leader:  # checked once the pidfd holds it: not a reused pid
                with contextlib.suppress(OSError):  # it exited meanwhile: the namespace is gone already
                    signal.pidfd_send_signal(pidfd, signal.SIGKILL)
                    select.select([pidfd], [], [], NAMESPACE_EXIT_WAIT_S)  # readable once it has exited
        finally:
            os.close(pidfd)
    _kill(leader)


def _kill(pid: int, signum: int = signal.SIGKILL) -> None:
    with contextlib.suppress(OSError):  # already gone, or not ours to signal
        os.kill(pid, signum)


def _stat_fields(pid: str) -> list[bytes] | None:
    """/proc/PID/stat's fields after the command name: state, ppid, pgrp, session, ..."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return None
    return stat[stat.rfind(b")") + 2:].split()


def _carries_marker(pid: str, needle: bytes) -> bool:
    with contextlib.suppress(OSError), open(f"/proc/{pid}/environ", "rb") as handle:
        return needle in handle.read().split(b"\0")
    return False


def _targets(root: int, token: str, root_alive: bool) -> set[int]:
    """One pass over /proc: the root's group and session, processes carrying the marker, and (root alive) its
    descendants; zombies are left out (they are dead already)."""
    needle = MARKER_VARIABLE + token.encode()
    targets: set[int] = {root} if root_alive else set()
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        fields = _stat_fields(entry) if entry.isdigit() else None
        if fields is None or fields[0] in (b"Z", b"X"):
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
        if root in (int(fields[2]), int(fields[3])) or (token and _carries_marker(entry, needle)):
            targets.add(int(entry))
    stack = [root] if root_alive else []
    while stack:
        for child in children.get(stack.pop(), []):
            targets.add(child)
            stack.append(child)
    return targets - {os.getpid()}


def kill_tree(root: int, token: str, *, root_alive: bool = True) -> None:
    """SIGKILL the run's processes until none is left (all stopped first in each round, so no shell runs its next
    command when a child of its dies first).

    `root_alive` False means the root was already reaped: its pid may be reused, so only the group, the session and
    the marker identify the run's processes (pgid and session ids are not reused while members exist).
    """
    for _round in range(20 if root > 1 else 0):  # no run's leader: never our own group (0) or init's session (1)
        targets = _targets(root, token, root_alive and _stat_fields(str(root)) is not None)
        if not targets:
            return
        for signum in (signal.SIGSTOP, signal.SIGKILL):
            for pid in targets:
                _kill(pid, signum)
        time.sleep(0.002)  # scan again: a dying process may have spawned more
