"""How a run's processes are stopped (`process.Worker.kill` picks the strongest way the run has): its cgroup's
`cgroup.kill`, else its PID namespace's init, else (the weak tier) a /proc scan of its session and marker.

A run gets its own cgroup when the machine lets us make one (`RunCgroup`: a folder of the same name in the v2
hierarchy, which has `cgroup.kill`, and in the pids hierarchy, which caps it; on a hybrid machine those differ).

1. `cgroup.kill` (Linux 5.14+): the kernel SIGKILLs every member at once; nothing can leave a cgroup, so a
   double-forked daemon, a fork bomb, a new session or a process ignoring SIGTERM all go with it;
2. bubblewrap's PID namespace: SIGKILL to its init (bubblewrap's only child) makes the kernel kill all of it;
3. the weak tier without either: `kill_tree`, a /proc scan for the run's session, marked environment and (while the
   worker, a subreaper, lives) its descendants, all stopped then killed until none is left (a process that left the
   session, cleared its environment and was orphaned escapes it: `tuiagent sandbox status` says so).

A stop never waits for the processes to exit (but for a namespace's init, off the event loop); `Worker.release`
(after the leader exited) does, for as long as removing the cgroup needs.
"""

from __future__ import annotations

import contextlib
import functools
import os
import select
import signal
import time
from pathlib import Path

from tui_agent.core.sandbox.worker_guard import descendants, live_processes, process_info, stop_then_kill

V1_PIDS = Path("/sys/fs/cgroup/pids")
SANDBOX_OVERHEAD = 3
"""Processes of the sandbox itself inside the cgroup (bwrap, its pid-1, the worker)."""
MARKER_VARIABLE = b"TUIAGENT_SANDBOX_RUN="
"""The weak tier's mark on every process of a run (its environment): what the session scan looks for."""
NAMESPACE_EXIT_WAIT_S = 2.0
"""How long a namespace's stop waits for its leader to stop, then for its killed init to exit (which waits for the
rest of its namespace to die)."""
EMPTY_WAIT_S = 1.0
"""How long `RunCgroup.remove` waits for killed members to finish exiting (they go within milliseconds)."""

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


def _usable(base: Path | None, needed: str) -> Path | None:
    """`base` when this process may create children there that have `needed` (else None), once the run cgroups left
    there by a tuiagent that died without closing its sandbox are removed."""
    if base is None:
        return None
    probe = base / f"tuiagent-probe-{os.getpid()}"
    try:
        probe.mkdir()
        found = (probe / needed).exists()
        probe.rmdir()
    except OSError:
        return None
    if not found:
        return None
    for stale in base.glob("tuiagent-*-*"):
        owner = stale.name.split("-")[1]
        if owner.isdigit() and not Path(f"/proc/{owner}").exists():
            RunCgroup([stale], kill=stale if (stale / "cgroup.kill").exists() else None).remove()
    return base


@functools.cache
def kill_base() -> Path | None:
    """A cgroup v2 folder where this process may create children that have `cgroup.kill` (Linux 5.14+), or None."""
    mount, own = _v2_mount(), _own_path("v2")
    return _usable(mount / own.lstrip("/") if mount is not None and own is not None else None, "cgroup.kill")


@functools.cache
def pids_base() -> Path | None:
    """A cgroup folder where this process may create pids-limited children, or None."""
    own, killing = _own_path("pids"), kill_base()  # kill_base first: its stale twins go killed
    if own is not None and (V1_PIDS / "cgroup.procs").exists():
        return _usable(V1_PIDS / own.lstrip("/"), "pids.max")
    if killing is not None and "pids" in _read(killing / "cgroup.subtree_control").split():
        return killing  # cgroup v2 only: the pids controller is delegated to our children (which have pids.max)
    return None


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


def kill_namespace(leader: int) -> None:
    """SIGKILL bubblewrap `leader`'s child, its PID namespace's init (the kernel then kills the rest of it), wait until
    it has exited, then SIGKILL bubblewrap. The init exits only once every other process of its namespace is gone:
    without the wait, bubblewrap's exit could be seen while a killed daemon of the run still ran for a moment. The
    leader is stopped first: one still starting is a shell whose `mount` child exits before it becomes bubblewrap,
    which then starts the init, and a leader running on could do either between its children's reading and its kill.
    It blocks for as long as that takes: it runs off the event loop."""
    kill_process(leader, signal.SIGSTOP)
    deadline = time.monotonic() + NAMESPACE_EXIT_WAIT_S
    while _state(leader) not in "TtZX" and time.monotonic() < deadline:  # "" (gone) is in it too
        time.sleep(0.001)
    for child in _read(Path(f"/proc/{leader}/task/{leader}/children")).split():
        with contextlib.suppress(OSError):  # it exited meanwhile
            pidfd = os.pidfd_open(int(child))
            try:
                if (info := process_info(child)) is not None and info[0] == leader:  # held by the pidfd: not reused
                    signal.pidfd_send_signal(pidfd, signal.SIGKILL)
                    select.select([pidfd], [], [], NAMESPACE_EXIT_WAIT_S)  # readable once it has exited
            finally:
                os.close(pidfd)
    kill_process(leader)


def _state(pid: int) -> str:
    """A process's state letter (R, S, D, T, Z, ...), "" once it is gone."""
    stat = _read(Path(f"/proc/{pid}/stat"))
    return stat[stat.rfind(")") + 2:][:1]


def kill_process(pid: int, signum: int = signal.SIGKILL) -> None:
    with contextlib.suppress(OSError):  # already gone, or not ours to signal
        os.kill(pid, signum)


def _carries_marker(pid: int, needle: bytes) -> bool:
    with contextlib.suppress(OSError), open(f"/proc/{pid}/environ", "rb") as handle:
        return needle in handle.read().split(b"\0")
    return False


def kill_tree(root: int, token: str, *, root_alive: bool = True) -> None:
    """SIGKILL the weak tier's run until none of its processes is left: its session (the leader leads it; a process
    group never spans sessions), the processes carrying its marker, and, `root_alive` (not reaped: its pid cannot
    have been reused), the root and its descendants (the worker is a subreaper: while it lives, every process of the
    run is one of them). A session id is not reused while the session has members."""

    def targets() -> set[int]:
        processes, needle = live_processes(), MARKER_VARIABLE + token.encode()
        found = {pid for pid, (_parent, session) in processes.items() if session == root or _carries_marker(pid, needle)}
        if root_alive and root in processes:
            found.update((root, *descendants(root, processes)))
        return found - {os.getpid()}

    if root > 1:  # a run's leader, never init's session (1) or our own group (0)
        stop_then_kill(targets, rounds=20)
