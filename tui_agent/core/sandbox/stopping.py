"""The one place a run is stopped: its cgroup's `cgroup.kill`, else its PID namespace's init, else its session.

Which one applies is decided by what the run has, strongest first:

1. its own cgroup v2 folder with `cgroup.kill` (Linux 5.14+): the kernel SIGKILLs every member at once and
   refuses new forks meanwhile; nothing can leave a cgroup, so a double-forked daemon, a fork bomb, a new
   session or a process ignoring SIGTERM all go with it;
2. bubblewrap's PID namespace (`--unshare-pid`): SIGKILL to the namespace's init (bubblewrap's only child) makes
   the kernel kill every process of the namespace, and none can leave it;
3. the weak tier without either: the documented fallback of `reaper.kill_tree`, a /proc scan for the run's
   session, process group, marked environment and descendants, stopped then killed until none is left (a process
   that left the session, cleared its environment and was orphaned is out of its reach: `describe.py` says so).

A stop never waits for the processes to exit; `release` (after the run's leader exited) does, for as long as
removing the cgroup needs.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from dataclasses import dataclass

from tui_agent.core.sandbox import reaper
from tui_agent.core.sandbox.cgroups import RunCgroup

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
    reaper.kill_tree(run.leader, run.token, root_alive=leader_alive)


async def stop_soon(run: RunProcesses, *, leader_alive: bool = True) -> None:
    """`stop`, with the weak tier's /proc scan off the event loop."""
    if run.how() == BY_SESSION:
        await asyncio.to_thread(stop, run, leader_alive=leader_alive)
    else:
        stop(run, leader_alive=leader_alive)


async def release(run: RunProcesses) -> None:
    """After the leader exited: nothing the run started outlives it, and its cgroup is removed."""
    if run.how() == BY_SESSION:
        await asyncio.to_thread(reaper.kill_tree, run.leader, run.token, root_alive=False)
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
    """SIGKILL the namespace's init (the kernel then kills all of it), then bubblewrap itself."""
    pidfd = namespace_init(leader)
    if pidfd is not None:
        try:
            with contextlib.suppress(OSError):  # it exited meanwhile: the namespace is gone already
                signal.pidfd_send_signal(pidfd, signal.SIGKILL)
        finally:
            os.close(pidfd)
    _kill(leader)


def _kill(pid: int) -> None:
    with contextlib.suppress(OSError):  # already gone
        os.kill(pid, signal.SIGKILL)


def _parent(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return None
    return int(stat[stat.rfind(b")") + 2:].split()[1])
