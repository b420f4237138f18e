"""Finding and killing every process a run started: descendants, its process group, and anything carrying its marker."""

from __future__ import annotations

import os
import signal
import time


MARKER_VARIABLE = b"TUIAGENT_SANDBOX_RUN="


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


def group_members(pgid: int) -> list[int]:
    found: list[int] = []
    for entry in os.listdir("/proc"):
        fields = _stat_fields(entry) if entry.isdigit() else None
        if fields is not None and (int(fields[2]) == pgid or int(fields[3]) == pgid):
            found.append(int(entry))
    return found


def _targets(root: int, token: str, root_alive: bool) -> set[int]:
    """One pass over /proc: the root's group and session, processes carrying the marker, and (root alive) its descendants."""
    needle = MARKER_VARIABLE + token.encode()
    targets: set[int] = set()
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        fields = _stat_fields(entry)
        if fields is None:
            continue
        pid = int(entry)
        if root_alive:
            children.setdefault(int(fields[1]), []).append(pid)
        if (int(fields[2]) == root or int(fields[3]) == root) and pid != root:
            targets.add(pid)
        elif _carries_marker(entry, needle):
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


def _signal_all(pids: set[int], signum: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, signum)
        except OSError:  # already gone, or not ours to signal
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
    targets: set[int] | None = _targets(root, token, alive)
    assert targets is not None
    seen = set(targets)
    if grace_s > 0 and targets:
        # Stopped first, so no shell goes on to its next command when a child of its dies before it does (`sleep 6;
        # echo > F`); each then meets its pending SIGTERM as it is continued.
        _signal_all(targets, signal.SIGSTOP)
        _signal_all(targets, signal.SIGTERM)
        _signal_all(targets, signal.SIGCONT)
        deadline = time.monotonic() + grace_s
        pause = 0.002  # most runs end within a few ms of SIGTERM: look early, then every 20 ms
        while time.monotonic() < deadline:
            time.sleep(pause)
            pause = min(pause * 2, 0.02)
            if not _targets(root, token, alive and _root_alive(root)) - {root}:
                break
        targets = None
    for _round in range(20):
        if targets is None:
            targets = _targets(root, token, alive and _root_alive(root))
        targets -= {pid for pid in targets if _is_zombie(pid)}
        if not targets:
            break
        seen |= targets
        _signal_all(targets, signal.SIGSTOP)
        _signal_all(targets, signal.SIGKILL)
        time.sleep(0.01)
        targets = None  # scan again: a dying process may have spawned more
    return len(seen)


def _is_zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return True
    return stat[stat.rfind(b")") + 2:].split()[0] in (b"Z", b"X")
