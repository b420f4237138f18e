"""Finding and killing every process a run started: descendants, its process group, and anything carrying its marker."""

from __future__ import annotations

import os
import signal
import time

from tui_agent.core.sandbox.worker_guard import descendants

MARKER_VARIABLE = b"TUIAGENT_SANDBOX_RUN="


def marked_processes(token: str) -> list[int]:
    """Processes whose initial environment carries this run's marker (catches daemons that left the group)."""
    needle = MARKER_VARIABLE + token.encode()
    found: list[int] = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as handle:
                environ = handle.read()
        except OSError:
            continue
        if needle in environ.split(b"\0"):
            found.append(int(entry))
    return found


def group_members(pgid: int) -> list[int]:
    found: list[int] = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2:].split()
        if int(fields[2]) == pgid or int(fields[3]) == pgid:
            found.append(int(entry))
    return found


def _targets(root: int, token: str, root_alive: bool) -> set[int]:
    targets = (set(group_members(root)) - {root}) | set(marked_processes(token))
    if root_alive:
        targets |= {root, *descendants(root)}
    targets.discard(os.getpid())
    return targets


def _signal_all(pids: set[int], signum: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, signum)
        except OSError:
            pass


def _root_alive(root: int) -> bool:
    try:
        with open(f"/proc/{root}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2:].split()[0] != b"Z"


def kill_tree(root: int, token: str, grace_s: float, *, root_alive: bool = True) -> int:
    """SIGTERM the run's processes, wait up to `grace_s`, then SIGKILL until none is left. Returns how many were seen.

    `root_alive` False means the root was already reaped: its pid may be reused, so only the group and the
    marker identify the run's processes (pgid and session ids are not reused while members exist).
    """
    alive = root_alive and _root_alive(root)
    targets = _targets(root, token, alive)
    seen = set(targets)
    if grace_s > 0 and targets:
        _signal_all(targets, signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline:
            time.sleep(0.02)
            if not _targets(root, token, alive and _root_alive(root)) - {root}:
                break
    for _round in range(20):
        targets = _targets(root, token, alive and _root_alive(root))
        zombies = {pid for pid in targets if _is_zombie(pid)}
        targets -= zombies
        if not targets:
            break
        seen |= targets
        _signal_all(targets, signal.SIGSTOP)
        _signal_all(targets, signal.SIGKILL)
        time.sleep(0.01)
    return len(seen)


def _is_zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return True
    return stat[stat.rfind(b")") + 2:].split()[0] in (b"Z", b"X")
