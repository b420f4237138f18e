"""Inside the sandbox (stdlib only): a fork server that imports once, then forks one child per run, one run at a time.

The host sends three file descriptors per run (the run's own result channel, stdout and stderr); the child
says hello on its channel (the host reads its pid from the message's credentials and moves it into the run's
cgroup), then waits for its request and serves exactly that one, like a fresh worker would. The host arms the
next child while a run executes (moving a process between cgroups can take milliseconds), and sends it its
request only after the earlier run's cgroup is emptied; the child then wipes the private tmpfs folders (/tmp,
the hidden homes), so no run sees what an earlier one left there.
"""

from __future__ import annotations

import gc
import os
import select
import signal
import socket
import stat
import struct
from collections.abc import Callable

FDS_PER_RUN = 3  # result channel, stdout, stderr
SANDBOX_HOME = "/tmp/home"
"""HOME inside the sandbox (on its private /tmp): bubblewrap makes it, each forked run makes it again after the wipe."""


def wipe(folder: str) -> None:
    """Empty a private tmpfs folder of this sandbox, never crossing into another file system (a bind mount:
    the project, the interpreter) and never following a symbolic link."""
    try:
        device = os.lstat(folder).st_dev
    except OSError:
        return
    stack: list[tuple[str, bool]] = [(folder, False)]
    while stack:  # iterative post-order: a hostile run can nest folders deeper than any recursion limit
        path, emptied = stack.pop()
        if emptied:
            if path != folder:
                _quietly(os.rmdir, path)  # fails while it holds a mount point: then it stays
            continue
        stack.append((path, True))
        try:
            entries = list(os.scandir(path))
        except OSError:
            continue
        for entry in entries:
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if info.st_dev != device:
                continue
            if stat.S_ISDIR(info.st_mode):
                stack.append((entry.path, False))
            else:
                _quietly(os.unlink, entry.path)


def _quietly(action: Callable[[str], None], path: str) -> None:
    try:
        action(path)
    except OSError:
        pass


def tmpfs_mounts() -> set[str]:
    """Mount points of tmpfs file systems in this process' mount namespace (from /proc/self/mountinfo)."""
    found: set[str] = set()
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                fields, _, rest = line.partition(" - ")
                parts = fields.split()
                if len(parts) >= 5 and rest.split()[:1] == ["tmpfs"]:
                    found.add(parts[4])
    except OSError:
        pass
    return found


def private_folders(scratch: list[str]) -> list[str]:
    """The scratch folders that really are tmpfs mounts of this sandbox (only those are ever wiped)."""
    if os.environ.get("TUIAGENT_SANDBOX") != "bubblewrap":
        return []  # only bubblewrap gives this process private folders
    mounts = tmpfs_mounts()
    return [folder for folder in scratch if folder in mounts]


def wipe_private_folders(folders: list[str]) -> None:
    """Empty /tmp and the hidden homes (the tmpfs folders of this sandbox), then recreate HOME."""
    for folder in folders:
        wipe(folder)
    if folders:
        os.makedirs(SANDBOX_HOME, exist_ok=True)


RUN = struct.Struct("I")  # the host's id for a run
EXIT = struct.Struct("Ii")  # run id, exit status (negative: killed by that signal)


def run_child(control: socket.socket, wakeup: tuple[int, int], fds: list[int], folders: list[str],
              run_one: Callable[[int, Callable[[], None]], None]) -> None:
    """In the forked child: take the run's descriptors, leave the server's session, say hello, serve one request.

    The child may wait (armed) while an earlier run still executes: the private folders are wiped only once its
    request arrives, which the host sends after the earlier run and everything it started are gone.
    """
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        control.close()
        for fd in wakeup:
            os.close(fd)
        channel, out, err = fds
        os.dup2(out, 1)
        os.dup2(err, 2)
        os.close(out)
        os.close(err)
        os.setsid()
        os.write(channel, b"H")
        run_one(channel, lambda: wipe_private_folders(folders))
    finally:
        os._exit(70)


def serve(control_fd: int, *, scratch: list[str], preload: Callable[[], None], harden: Callable[[], None],
          run_one: Callable[[int, Callable[[], None]], None]) -> None:
    """Preload, say "U" (up), then: b"R" + run id (+ 3 fds) forks a child; each exit is reported as b"D" + EXIT."""
    control = socket.socket(fileno=control_fd)
    folders = private_folders(scratch)
    harden()
    preload()
    gc.freeze()  # what is loaded now is shared with every child: no collection of theirs walks (and copies) it
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_read, False)
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    runs: dict[int, int] = {}  # child pid -> run id
    control.sendall(b"U")
    while True:
        readable, _, _ = select.select([control.fileno(), wake_read], [], [])
        if wake_read in readable:
            while len(os.read(wake_read, 512)) == 512:
                pass
            report_exits(control, runs)
        if control.fileno() in readable and not fork_requested(control, (wake_read, wake_write), folders, runs, run_one):
            return


def fork_requested(control: socket.socket, wakeup: tuple[int, int], folders: list[str], runs: dict[int, int],
                   run_one: Callable[[int, Callable[[], None]], None]) -> bool:
    """Fork a child for the run the host sent; False when the host closed the channel."""
    try:
        message, fds, _flags, _address = socket.recv_fds(control, 1 + RUN.size, FDS_PER_RUN)
    except InterruptedError:
        return True
    except OSError:
        return False
    if not message:
        return False
    if len(message) != 1 + RUN.size or len(fds) != FDS_PER_RUN:
        for fd in fds:
            os.close(fd)
        return True
    (run_id,) = RUN.unpack(message[1:])
    pid = os.fork()
    if pid == 0:
        run_child(control, wakeup, fds, folders, run_one)
    for fd in fds:
        os.close(fd)
    runs[pid] = run_id
    return True


def report_exits(control: socket.socket, runs: dict[int, int]) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        run_id = runs.pop(pid, None)
        if run_id is not None:
            control.sendall(b"D" + EXIT.pack(run_id, os.waitstatus_to_exitcode(status)))
