"""Inside the sandbox (stdlib only): a batch's calls, each in a forked child of the batch's run.

A batch's run (already under the run's limits and seccomp filter, and a subreaper) forks a child per call, which
leaves the session and runs the call with its own stdout and stderr; the run collects its answer within the per-call
time limit, kills the child if it is late, then ends everything the call left behind and empties the private folders
(/tmp, the hidden homes) before the next call starts, so no call sees what an earlier one left there. Each child
starts with fresh CPU time and its own address-space limit, so every call gets the same limits a run of its own would.
"""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import time
import types
from collections.abc import Callable
from typing import Any

SANDBOX_HOME = "/tmp/home"
"""HOME inside the sandbox (on its private /tmp): bubblewrap makes it, the wipe between a batch's calls makes it again."""
OUTPUT_CAP = 64 * 1024
"""What a batched call's stdout and stderr each keep: two thirds from the start, one third from the end."""
ANSWER_LIMIT = 8 * 1024 * 1024
FD_CEILING = 2**31 - 1
"""Past the highest descriptor there can be (close_range takes the whole range at once)."""


def wipe(folder: str) -> None:
    """Empty a private tmpfs folder of this sandbox, never crossing into another file system (a bind mount:
    the project, the interpreter) and never following a symbolic link."""
    try:
        device = os.lstat(folder).st_dev
    except OSError:
        return
    pending, folders = [folder], []
    while pending:  # iteratively: a hostile run can nest folders deeper than any recursion limit
        folders.append(path := pending.pop())
        with contextlib.suppress(OSError):  # a call may have locked it against its owner, who may unlock it
            os.chmod(path, 0o755)  # bubblewrap's mode; a folder, never a link: nothing runs meanwhile to swap one in
        with contextlib.suppress(OSError), os.scandir(path) as entries:
            for entry in entries:
                with contextlib.suppress(OSError):
                    if entry.stat(follow_symlinks=False).st_dev != device:
                        continue
                    if entry.is_dir(follow_symlinks=False):
                        pending.append(entry.path)
                    else:
                        os.unlink(entry.path)
    for path in reversed(folders[1:]):  # each after the folders inside it
        with contextlib.suppress(OSError):  # fails while it holds a mount point: then it stays
            os.rmdir(path)


def remove_ipc_objects() -> None:
    """Remove every System V shared memory segment, message queue and semaphore set of this sandbox's IPC namespace
    (each outlives the call that made it; the next call could attach it); ctypes is loaded only when there is one.
    Under bubblewrap only (--unshare-ipc): the weak tier shares the person's namespace, whose objects are theirs."""
    if os.environ.get("TUIAGENT_SANDBOX") != "bubblewrap":
        return
    found = []
    for kind in ("shm", "msg", "sem"):
        with contextlib.suppress(OSError), open(f"/proc/sysvipc/{kind}", encoding="ascii") as listing:
            found += [(kind, int(line.split()[1])) for line in listing.readlines()[1:] if line.split()[1:2]]
    if not found:
        return
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    for kind, ipc_id in found:  # IPC_RMID is 0 for each
        if kind == "sem":
            libc.semctl(ipc_id, 0, 0)
        else:
            getattr(libc, f"{kind}ctl")(ipc_id, 0, None)


def private_folders(scratch: list[str]) -> list[str]:
    """The scratch folders that really are tmpfs mounts of this sandbox (only those are ever wiped; only bubblewrap
    gives this process private folders), from /proc/self/mountinfo: the last mount at a path is the one seen there (a
    tmpfs the project was then bound over is the project)."""
    if os.environ.get("TUIAGENT_SANDBOX") != "bubblewrap":
        return []
    is_tmpfs: dict[str, bool] = {}
    with contextlib.suppress(OSError), open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as handle:
        for line in handle:
            fields, _, rest = line.partition(" - ")
            parts = fields.split()
            if len(parts) >= 5:
                is_tmpfs[parts[4]] = rest.split()[:1] == ["tmpfs"]
    return [folder for folder in scratch if is_tmpfs.get(folder)]


def enter_child(out: int, err: int, answer: int) -> None:
    """In a forked child: `out` and `err` as stdout and stderr, a session of its own, and no descriptor but stdin,
    stdout, stderr and `answer`: never the run's channel to the host, on which a call could answer for the whole
    batch."""
    os.dup2(out, 1)
    os.dup2(err, 2)
    os.closerange(3, answer)
    os.closerange(answer + 1, FD_CEILING)
    os.setsid()


def call_each(calls: list[Any], answer_of: Callable[[Any], dict[str, Any]], *, guard: types.ModuleType,
              timeout_s: float, scratch: list[str]) -> list[dict[str, Any]]:
    """Each call's answer, in order: `answer_of(call)` in its forked child, with its stdout, stderr, exit code and
    duration (see `one_call`); after each call, what it left running is killed, then the private folders among
    `scratch` are emptied and HOME made again."""
    folders = private_folders(scratch)
    gc.freeze()  # the children share these pages untouched: no collection of theirs walks (and copies) them
    answers = []
    for call in calls:
        answers.append(one_call(call, answer_of, guard, timeout_s))
        guard.kill_descendants()
        remove_ipc_objects()
        for folder in folders:
            wipe(folder)
        if folders:
            os.makedirs(SANDBOX_HOME, exist_ok=True)
    return answers


def one_call(call: Any, answer_of: Callable[[Any], dict[str, Any]], guard: types.ModuleType,
             timeout_s: float) -> dict[str, Any]:
    """Run one call in a forked child: {ok, value, value_is_repr, error, error_kind, stdout, stderr, output_truncated,
    exit_code, duration_ms}."""
    started = time.monotonic()
    answer_pipe, out_pipe, err_pipe = pipes = [os.pipe() for _stream in range(3)]
    pid = os.fork()
    if pid == 0:
        try:
            enter_child(out_pipe[1], err_pipe[1], answer_pipe[1])
            guard.send(answer_pipe[1], answer_of(call))
        finally:
            os._exit(0)
    answer_kept = guard.Kept(ANSWER_LIMIT, 0, [0])  # its first bytes only: an answer over the limit is none
    out, err = (guard.Kept(OUTPUT_CAP * 2 // 3, OUTPUT_CAP // 3, [0]) for _stream in range(2))
    for (_read, write) in pipes:
        os.close(write)
    sinks = {answer_pipe[0]: answer_kept.add, out_pipe[0]: out.add, err_pipe[0]: err.add}
    status = guard.watch_child(pid, sinks, started + timeout_s)
    timed_out = status is None
    if timed_out:
        os.kill(pid, signal.SIGKILL)  # not reaped yet: still there to kill, exited or not
        _pid, status = os.waitpid(pid, 0)
    for read, _write in pipes:
        os.close(read)
    answer: dict[str, Any] | None = guard.decoded(bytes(answer_kept.kept) if answer_kept.total <= ANSWER_LIMIT else b"")
    exit_code = os.waitstatus_to_exitcode(status)
    if answer is None or "ok" not in answer:
        answer = {"ok": False, "value": None, "value_is_repr": False,
                  "error_kind": "timeout" if timed_out else ("limit" if exit_code in (-9, -24) else "sandbox"),
                  "error": (f"timed out after {timeout_s:g} s" if timed_out
                            else f"the call's process ended with status {exit_code} without an answer")}
    (stdout, out_cut), (stderr, err_cut) = out.text("stdout"), err.text("stderr")
    answer.update(stdout=stdout, stderr=stderr, output_truncated=bool(out_cut or err_cut), exit_code=exit_code,
                  duration_ms=round((time.monotonic() - started) * 1000, 3))
    return answer

