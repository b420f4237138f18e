"""Inside the sandbox (stdlib only): a shell command run as `bash -c COMMAND` (`/bin/sh -c` without bash), its output
copied out live and kept head and tail, its exit status and its last pipeline's statuses reported."""

from __future__ import annotations

import os
import selectors
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable
from typing import Any

LIVE_OUTPUT_BYTES = 1_000_000
"""How much of a command's output is copied out live; after it the person sees the rest with the result."""
LIVE_CUT_NOTE = b"\n[tuiagent: live output stops here after 1 MB; the rest comes with the result]\n"
DRAIN_AFTER_EXIT_S = 0.3
"""How long the output is still read after the shell exited while something it left running holds the pipes."""
READ_SIZE = 65536
PIPELINE_STARTUP = (
    'unset BASH_ENV; _tuiagent_status_fd=$TUIAGENT_STATUS_FD; unset TUIAGENT_STATUS_FD\n'
    'trap \'_tuiagent_p=("${PIPESTATUS[@]}"); echo "${_tuiagent_p[*]}" >&"$_tuiagent_status_fd"\' EXIT\n'
)
"""bash's startup file (BASH_ENV) for the command's shell: on exit it reports the exit status of each command of the
last pipeline the command ran, on a pipe; the command itself is passed to the shell untouched."""


class Kept:
    """One stream's output: every byte counted, the first `head` and the last `tail` bytes kept."""

    def __init__(self, head: int, tail: int) -> None:
        self.head_size, self.tail_size = head, tail
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, data: bytes) -> None:
        self.total += len(data)
        room = self.head_size - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data and self.tail_size:
            self.tail += data
            if len(self.tail) > 2 * self.tail_size:
                del self.tail[:-self.tail_size]

    def text(self, stream: str) -> tuple[str, int]:
        """The kept output as text, with a note of how much was cut from its middle; how many bytes were cut."""
        tail = bytes(self.tail[-self.tail_size:]) if self.tail_size else b""
        cut = self.total - len(self.head) - len(tail)
        if cut <= 0:
            return (bytes(self.head) + bytes(self.tail)).decode("utf-8", errors="replace"), 0
        note = f"\n[tuiagent: {cut} bytes of {stream} cut here ({self.total} bytes in all): the first {len(self.head)} and last {len(tail)} are kept]\n"
        return self.head.decode("utf-8", errors="replace") + note + tail.decode("utf-8", errors="replace"), cut


def run_shell(command: str, timeout_s: float, keep_bytes: int, kill_tree: Callable[[], Any],
              end_leftovers: bool = True) -> dict[str, Any]:
    """Run `command` in a shell of its own process group; the report: exit code or signal (or timed out), each
    stream's kept text and size, and, with bash, the exit status of each command of its last pipeline.

    On timeout `kill_tree` ends it and its descendants (the report is written next); once it exited, what it left
    running is ended too when `end_leftovers` (the weak tier); under bubblewrap that goes with the run, which ends
    right after (its PID namespace, or its cgroup when forked)."""
    bash = shutil.which("bash")
    status_r, status_w = os.pipe()
    startup = _startup_file() if bash else None
    env = dict(os.environ)
    if startup is not None:
        env.update(BASH_ENV=startup, TUIAGENT_STATUS_FD=str(status_w))
    try:
        try:
            process = subprocess.Popen([bash or "/bin/sh", "-c", command], stdin=subprocess.DEVNULL,
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, pass_fds=(status_w,), env=env,
                                       process_group=0)
        finally:
            os.close(status_w)
        report = _collect(process, timeout_s, keep_bytes, kill_tree, end_leftovers)
        if startup is not None:
            report["pipeline"] = _pipeline(status_r)
    finally:
        os.close(status_r)
        if startup is not None:
            os.unlink(startup)
    return report


def _startup_file() -> str:
    fd, path = tempfile.mkstemp(prefix="tuiagent-shell-", suffix=".bash")
    with open(fd, "w", encoding="utf-8") as handle:
        handle.write(PIPELINE_STARTUP)
    return path


def _collect(process: subprocess.Popen[bytes], timeout_s: float, keep_bytes: int,
             kill_tree: Callable[[], Any], end_leftovers: bool) -> dict[str, Any]:
    assert process.stdout is not None and process.stderr is not None
    out_bytes, err_bytes = keep_bytes * 2 // 3, keep_bytes // 3  # each kept two thirds head, one third tail
    kept = {process.stdout.fileno(): Kept(out_bytes * 2 // 3, out_bytes // 3),
            process.stderr.fileno(): Kept(err_bytes * 2 // 3, err_bytes // 3)}
    deadline = time.monotonic() + timeout_s
    timed_out = _pump(process, kept, deadline)
    if not timed_out:
        try:  # its streams may have closed while it still runs (`exec >&- 2>&-; sleep 1000`)
            process.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            timed_out = True
    if timed_out:
        kill_tree()
    status = process.wait()
    if end_leftovers:
        kill_tree()  # what it left running in the background (`sleep 1000 &`) ends with it
    stdout, stderr = kept[process.stdout.fileno()], kept[process.stderr.fileno()]
    process.stdout.close()
    process.stderr.close()
    out, out_cut = stdout.text("stdout")
    err, err_cut = stderr.text("stderr")
    report: dict[str, Any] = {"exit_code": None, "signal": None, "timed_out": timed_out, "stdout": out, "stderr": err,
                              "stdout_bytes": stdout.total, "stderr_bytes": stderr.total, "cut_bytes": out_cut + err_cut}
    if timed_out:
        report["stderr"] = err + f"timed out after {timeout_s:g}s"
    elif status < 0:
        report["signal"] = _signal_name(-status)
    else:
        report["exit_code"] = status
    return report


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _pump(process: subprocess.Popen[bytes], kept: dict[int, Kept], deadline: float) -> bool:
    """Read both streams until they close (or, once the shell exited, a moment more), copying the first
    LIVE_OUTPUT_BYTES to this process' stdout as they come; True when the deadline passed first."""
    selector = selectors.DefaultSelector()
    for fd in kept:
        os.set_blocking(fd, False)
        selector.register(fd, selectors.EVENT_READ)
    live = LIVE_OUTPUT_BYTES
    exited_at: float | None = None
    try:
        while selector.get_map():
            now = time.monotonic()
            if now >= deadline:
                return True
            if exited_at is None and process.poll() is not None:
                exited_at = now
            if exited_at is not None and now - exited_at > DRAIN_AFTER_EXIT_S:
                return False
            for key, _mask in selector.select(min(deadline - now, 0.1)):
                data = _read(key.fd)
                if data is None:
                    continue
                if not data:
                    selector.unregister(key.fd)
                    continue
                kept[key.fd].add(data)
                if live > 0:
                    _write_all(data[:live])
                    live -= len(data)
                    if live <= 0:
                        _write_all(LIVE_CUT_NOTE)
    finally:
        selector.close()
    return False


def _read(fd: int) -> bytes | None:
    """What the stream has now: b"" at its end, None when nothing after all."""
    try:
        return os.read(fd, READ_SIZE)
    except BlockingIOError:
        return None


def _write_all(data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(1, view):]


def _pipeline(status_r: int) -> list[int] | None:
    os.set_blocking(status_r, False)
    try:
        return [int(part) for part in os.read(status_r, 4096).split()]
    except (OSError, ValueError):
        return None
