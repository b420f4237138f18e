"""The weak tier's fallback stop (no cgroup.kill, no PID namespace): find the run's processes in /proc and kill them.

A run's processes are its leader's session and process group, anything carrying its marker variable, and (while the
leader lives) its descendants. A process that left the session, cleared its environment and was orphaned to init
cannot be told from any other: only a cgroup or a namespace holds those (`stopping.py` uses them where they exist).
"""

from __future__ import annotations

import contextlib
import os
import signal
import time

MARKER_VARIABLE = b"TUIAGENT_SANDBOX_RUN="
ROUNDS = 20


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
