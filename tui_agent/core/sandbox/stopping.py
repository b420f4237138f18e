"""The one place a run's processes are held and stopped: its cgroup's `cgroup.kill`, else its PID namespace's init,
else its session.

A cgroup per run (`RunCgroup`), when the machine lets us make one: `cgroup.kill` (cgroup v2) stops it whole,
`pids.max` caps it. On a hybrid machine the two live in different hierarchies (the pids controller on v1,
`cgroup.kill` on the v2 `unified` mount): a run's cgroup is then a folder of the same name in each, and its
processes join both.

Which one applies is decided by what the run has, strongest first:

1. its own cgroup v2 folder with `cgroup.kill` (Linux 5.14+): the kernel SIGKILLs every member at once and
   refuses new forks meanwhile; nothing can leave a cgroup, so a double-forked daemon, a fork bomb, a new
   session or a process ignoring SIGTERM all go with it;
2. bubblewrap's PID namespace (`--unshare-pid`): SIGKILL to the namespace's init (bubblewrap's only child) makes
   the kernel kill every process of the namespace, and none can leave it;
3. the weak tier without either: the documented fallback of `kill_tree`, a /proc scan for the run's
   session, process group, marked environment and descendants, stopped then killed until none is left (a process
   that left the session, cleared its environment and was orphaned is out of its reach: `describe.py` says so).

A stop never waits for the processes to exit (but for a namespace's init, whose exit is the kernel's word that the
rest are gone: milliseconds); `release` (after the run's leader exited) does, for as long as
removing the cgroup needs.
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
ROUNDS = 20
EMPTY_WAIT_S = 1.0
"""How long `remove` waits for killed members to finish exiting (they go within milliseconds)."""
NAMESPACE_EXIT_WAIT_S = 2.0
"""How long a stop waits for a killed namespace init to exit (it waits for the rest of its namespace to die)."""

_base_cache: dict[str, Path | None] = {}


def _own_path(hierarchy: str) -> str | None:
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _id, controllers, path = line.split(":", 2)
        if (hierarchy == "v2" and _id == "0" and controllers == "") or hierarchy in controllers.split(","):
            return path
    return None


def _v2_mount() -> Path | None:
    """Where the cgroup v2 hierarchy is mounted (/sys/fs/cgroup, or /sys/fs/cgroup/unified on a hybrid machine)."""
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        fields, _, rest = line.partition(" - ")
        if rest.split()[:1] == ["cgroup2"]:
            return Path(fields.split()[4])
    return None


def kill_base() -> Path | None:
    """A cgroup v2 folder where this process may create children that have `cgroup.kill` (Linux 5.14+), or None."""
    if "kill" not in _base_cache:
        mount, own = _v2_mount(), _own_path("v2")
        base = mount / own.lstrip("/") if mount is not None and own is not None else None
        _base_cache["kill"] = base if base is not None and _can_create(base, "cgroup.kill") else None
        if _base_cache["kill"] is not None:
            remove_stale(_base_cache["kill"])
    return _base_cache["kill"]


def pids_base() -> Path | None:
    """A cgroup folder where this process may create pids-limited children, or None."""
    if "pids" not in _base_cache:
        own, base, killing = _own_path("pids"), None, kill_base()  # first: its stale twins go first, killed
        if own is not None and (V1_PIDS / "cgroup.procs").exists():
            base = V1_PIDS / own.lstrip("/")
        else:  # cgroup v2 only: the pids controller must be delegated to our children
            if killing is not None and "pids" in _read(killing / "cgroup.subtree_control").split():
                base = killing
        _base_cache["pids"] = base if base is not None and _can_create(base, "pids.max") else None
        if _base_cache["pids"] is not None:
            remove_stale(_base_cache["pids"])
    return _base_cache["pids"]


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def remove_stale(base: Path) -> None:
    """Remove run cgroups left behind by tuiagent processes that died without closing their sandbox."""
    for folder in base.glob("tuiagent-*-*"):
        owner = folder.name.split("-")[1]
        if owner.isdigit() and not Path(f"/proc/{owner}").exists():
            twin = _base_cache.get("kill")
            killing = folder if (folder / "cgroup.kill").exists() else (twin / folder.name if twin is not None else None)
            RunCgroup([folder], kill=killing if killing is not None and killing.exists() else None).remove()


def _can_create(folder: Path, needed: str) -> bool:
    probe = folder / f"tuiagent-probe-{os.getpid()}"
    try:
        probe.mkdir()
        usable = (probe / needed).exists()
        probe.rmdir()
        return usable
    except OSError:
        with contextlib.suppress(OSError):  # it was never created
            probe.rmdir()
        return False


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
        if not group.folders:
            return None
        if group.limit_folder is not None:
            group.set_limit(processes)
        return group

    @property
    def killable(self) -> bool:
        """Whether `kill` stops every member at once (cgroup v2's `cgroup.kill`)."""
        return self.kill_folder is not None

    @property
    def procs_files(self) -> list[Path]:
        """The `cgroup.procs` files a process joins the run through (one per hierarchy)."""
        return [folder / "cgroup.procs" for folder in self.folders]

    def join(self, pid: int) -> None:
        for procs in self.procs_files:
            procs.write_text(str(pid))

    def set_limit(self, processes: int, overhead: int = SANDBOX_OVERHEAD) -> None:
        if self.limit_folder is not None:
            (self.limit_folder / "pids.max").write_text(str(max(1, processes) + overhead))

    def members(self) -> list[int]:
        folder = self.kill_folder or self.folders[0]
        return [int(line) for line in _read(folder / "cgroup.procs").split()]

    def kill(self) -> bool:
        """SIGKILL every member at once, and whatever they fork meanwhile (the kernel's `cgroup.kill`); False when
        this cgroup has no `cgroup.kill` (or it is gone)."""
        if self.kill_folder is None:
            return False
        try:
            (self.kill_folder / "cgroup.kill").write_text("1")
            return True
        except OSError:
            return False

    def remove(self) -> None:
        """Kill what is left, wait (briefly) until the members have exited, and remove every folder."""
        self.kill()
        deadline = time.monotonic() + EMPTY_WAIT_S
        pause = 0.0002
        for folder in self.folders:
            while True:
                try:
                    folder.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:  # busy: a killed member has not finished exiting yet
                    if time.monotonic() > deadline:
                        break
                    time.sleep(pause)
                    pause = min(pause * 2, 0.01)


BY_CGROUP = "cgroup.kill"
BY_NAMESPACE = "pid namespace"
BY_SESSION = "session scan"


@dataclass
class RunProcesses:
    """What identifies a run's processes: the process tuiagent started, its cgroup, and whether it is bubblewrap."""

    leader: int
    """The host pid tuiagent started (bubblewrap, the weak tier's worker, or a fork server's child)."""
    cgroup: RunCgroup | None
    namespace: bool
    """The leader is bubblewrap with its own PID namespace: its only child is that namespace's init."""
    token: str = ""
    """The weak tier's marker (TUIAGENT_SANDBOX_RUN) in the run's environment."""
    leader_is_child: bool = True
    """The leader is tuiagent's own child (not reaped while the run lasts: its pid cannot be reused meanwhile)."""

    def how(self) -> str:
        """The mechanism `stop` uses for this run."""
        if self.cgroup is not None and self.cgroup.killable:
            return BY_CGROUP
        return BY_NAMESPACE if self.namespace else BY_SESSION


def stop(run: RunProcesses, *, leader_alive: bool = True) -> None:
    """SIGKILL every process of the run now (the session scan of the weak tier may take a few milliseconds)."""
    if run.cgroup is not None and run.cgroup.kill():
        if leader_alive and run.leader_is_child:
            _kill(run.leader)  # a leader still starting may not have joined its cgroup yet
        return
    if run.namespace:
        if leader_alive:
            kill_namespace(run.leader)
        return  # bubblewrap exits only after its child, the namespace's init: the namespace is gone already
    kill_tree(run.leader, run.token, root_alive=leader_alive)


async def stop_soon(run: RunProcesses, *, leader_alive: bool = True) -> None:
    """`stop`, with the weak tier's /proc scan off the event loop."""
    if run.how() == BY_SESSION:
        await asyncio.to_thread(stop, run, leader_alive=leader_alive)
    else:
        stop(run, leader_alive=leader_alive)


async def release(run: RunProcesses) -> None:
    """After the leader exited: nothing the run started outlives it, and its cgroup is removed."""
    if run.how() == BY_SESSION:
        await asyncio.to_thread(kill_tree, run.leader, run.token, root_alive=False)
    if run.cgroup is not None and not _removed_if_empty(run.cgroup):
        await asyncio.to_thread(run.cgroup.remove)


def _removed_if_empty(group: RunCgroup) -> bool:
    """Remove the cgroup's folders at once when the run left nothing in them (the usual case); False when one still
    has members, which `RunCgroup.remove` then kills and waits for."""
    for folder in group.folders:
        try:
            folder.rmdir()
        except FileNotFoundError:
            continue
        except OSError:  # EBUSY: members still there
            return False
    return True


def namespace_init(leader: int) -> int | None:
    """A pidfd for the init of bubblewrap `leader`'s PID namespace (its only child), or None when it has none."""
    try:
        with open(f"/proc/{leader}/task/{leader}/children", encoding="ascii") as handle:
            children = handle.read().split()
    except OSError:
        return None
    for child in children:
        try:
            pidfd = os.pidfd_open(int(child))
        except OSError:
            continue
        if _parent(int(child)) == leader:  # checked after the pidfd holds it: not a reused pid
            return pidfd
        os.close(pidfd)
    return None


def kill_namespace(leader: int) -> None:
    """SIGKILL the namespace's init (the kernel then kills all of it), wait until it has exited, then SIGKILL
    bubblewrap itself. The init exits only once every other process of its namespace is gone: without the wait,
    bubblewrap's exit could be seen while a killed daemon of the run still ran for a moment."""
    pidfd = namespace_init(leader)
    if pidfd is not None:
        try:
            with contextlib.suppress(OSError):  # it exited meanwhile: the namespace is gone already
                signal.pidfd_send_signal(pidfd, signal.SIGKILL)
                select.select([pidfd], [], [], NAMESPACE_EXIT_WAIT_S)  # readable once it has exited
        finally:
            os.close(pidfd)
    _kill(leader)


def _kill(pid: int) -> None:
    with contextlib.suppress(OSError):  # already gone
        os.kill(pid, signal.SIGKILL)


def _parent(pid: int) -> int | None:
    fields = _stat_fields(str(pid))
    return int(fields[1]) if fields is not None else None




def _stat_fields(pid: str) -> list[bytes] | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return None
    return stat[stat.rfind(b")") + 2:].split()


def _carries_marker(pid: str, needle: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            environ = handle.read()
    except OSError:
        return False
    return needle in environ.split(b"\0")


def _targets(root: int, token: str, root_alive: bool) -> set[int]:
    """One pass over /proc: the root's group and session, processes carrying the marker, and (root alive) its
    descendants; zombies are left out (they are dead already)."""
    needle = MARKER_VARIABLE + token.encode()
    targets: set[int] = set()
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        fields = _stat_fields(entry) if entry.isdigit() else None
        if fields is None or fields[0] in (b"Z", b"X"):
            continue
        pid = int(entry)
        if root_alive:
            children.setdefault(int(fields[1]), []).append(pid)
        if int(fields[2]) == root or int(fields[3]) == root or (token and _carries_marker(entry, needle)):
            targets.add(pid)
    if root_alive:
        targets.add(root)
        stack = [root]
        while stack:
            for child in children.get(stack.pop(), []):
                targets.add(child)
                stack.append(child)
    targets.discard(os.getpid())
    return targets


def kill_tree(root: int, token: str, *, root_alive: bool = True) -> int:
    """SIGKILL the run's processes until none is left (all stopped first in each round, so no shell runs its next
    command when a child of its dies first); how many were seen.

    `root_alive` False means the root was already reaped: its pid may be reused, so only the group, the session and
    the marker identify the run's processes (pgid and session ids are not reused while members exist).
    """
    seen: set[int] = set()
    if root <= 1:
        return 0  # no run's leader: never "everything in our own group" (0) or init's session (1)
    for _round in range(ROUNDS):
        targets = _targets(root, token, root_alive and _stat_fields(str(root)) is not None)
        if not targets:
            break
        seen |= targets
        for signum in (signal.SIGSTOP, signal.SIGKILL):
            for pid in targets:
                with contextlib.suppress(OSError):  # already gone, or not ours to signal
                    os.kill(pid, signum)
        time.sleep(0.002)  # scan again: a dying process may have spawned more
    return len(seen)
