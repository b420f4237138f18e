"""Inside the sandbox (stdlib only): many calls in one run, each in its own forked child, one after the other.

The run's process (already under the run's limits and seccomp filter, and a subreaper) forks a child per
call; the child leaves the session and runs the call with its own stdout and stderr; the parent collects its
answer within the per-call time limit, kills the child if it is late, then kills everything the call left
behind and empties the private folders before the next call starts. Each child starts with fresh CPU time
and its own address-space limit, so every call gets the same limits a run of its own would. The tool files are
read and compiled once by the run's process (`compile_module_files`; none of their code runs there): each child
runs its module from the top, as a run of its own would, without reading and compiling it again.
"""

from __future__ import annotations

import gc
import importlib.machinery
import importlib.util
import json
import os
import select
import signal
import time
import types
from collections.abc import Callable
from typing import Any

OUTPUT_CAP = 64 * 1024
ANSWER_LIMIT = 8 * 1024 * 1024
DRAIN_AFTER_EXIT_S = 0.5


def call_each(calls: list[Any], run_call: Callable[[Any], Any], *, timeout_s: float,
              encode: Callable[[Any], tuple[Any, bool]], describe_error: Callable[[BaseException], tuple[str, str]],
              between: Callable[[], None], report: Callable[[], dict[str, Any]] = dict) -> list[dict[str, Any]]:
    """The answer dict of each call, in order (see `one_call`); `report` adds what the child tells of its call."""
    gc.freeze()  # the children share these pages untouched: no collection of theirs walks (and copies) them
    wakeup = ChildExits()
    answers = []
    try:
        for call in calls:
            answers.append(one_call(call, run_call, timeout_s=timeout_s, encode=encode, describe_error=describe_error,
                                    wakeup=wakeup, report=report))
            between()
    finally:
        wakeup.close()
    return answers


def compile_module_files(calls: list[Any]) -> dict[tuple[str, str], tuple[Any, types.CodeType]]:
    """The spec and code of each distinct (module, file) of a batch's calls, read and compiled once by the batch's
    process: no code of the file runs here. A file that cannot be read or compiled is left to each call, whose own
    load reports it."""
    compiled: dict[tuple[str, str], tuple[Any, types.CodeType]] = {}
    for call in calls:
        if not isinstance(call, dict) or not call.get("module_path") or not isinstance(call.get("module"), str):
            continue
        key = (call["module"], str(call["module_path"]))
        if key in compiled:
            continue
        spec = importlib.util.spec_from_file_location(*key)
        if spec is None or not isinstance(spec.loader, importlib.machinery.SourceFileLoader):
            continue
        try:
            code = spec.loader.get_code(key[0])
        except (ImportError, OSError, SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        if code is not None:
            compiled[key] = (spec, code)
    return compiled


class ChildExits:
    """A pipe that becomes readable when a child exits (SIGCHLD through the signal wakeup fd), for `select`."""

    def __init__(self) -> None:
        self.fd, self._write_fd = os.pipe()
        for fd in (self.fd, self._write_fd):
            os.set_blocking(fd, False)
        self._previous_fd = signal.set_wakeup_fd(self._write_fd, warn_on_full_buffer=False)
        self._previous_handler = signal.signal(signal.SIGCHLD, lambda _signum, _frame: None)

    def drain(self) -> None:
        try:
            while os.read(self.fd, 512):
                pass
        except BlockingIOError:
            pass

    def forget_in_child(self) -> None:
        """In a forked child: the call starts with the signal state and descriptors a run of its own would have."""
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        os.close(self.fd)
        os.close(self._write_fd)

    def close(self) -> None:
        signal.set_wakeup_fd(self._previous_fd)
        signal.signal(signal.SIGCHLD, self._previous_handler)
        os.close(self.fd)
        os.close(self._write_fd)


def one_call(call: Any, run_call: Callable[[Any], Any], *, timeout_s: float,
             encode: Callable[[Any], tuple[Any, bool]], describe_error: Callable[[BaseException], tuple[str, str]],
             wakeup: ChildExits, report: Callable[[], dict[str, Any]] = dict) -> dict[str, Any]:
    """Run one call in a forked child: {ok, value, value_is_repr, error, error_kind, stdout, stderr, exit_code, duration_ms}."""
    started = time.perf_counter()
    answer_read, answer_write = os.pipe()
    out_read, out_write = os.pipe()
    err_read, err_write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(answer_read)
        os.close(out_read)
        os.close(err_read)
        wakeup.forget_in_child()
        serve_child(call, run_call, answer_write, out_write, err_write, encode, describe_error, report)
    for fd in (answer_write, out_write, err_write):
        os.close(fd)
    streams = {answer_read: bytearray(), out_read: bytearray(), err_read: bytearray()}
    status = collect(pid, streams, answer_read, deadline=started + timeout_s, wakeup=wakeup)
    timed_out = status is None
    if status is None:
        _kill(pid)
        _pid, status = os.waitpid(pid, 0)
    for fd in streams:
        os.close(fd)
    answer = _decode(bytes(streams[answer_read]))
    exit_code = os.waitstatus_to_exitcode(status)
    if answer is None:
        answer = {"ok": False, "value": None, "value_is_repr": False,
                  "error_kind": "timeout" if timed_out else ("limit" if exit_code in (-9, -24) else "sandbox"),
                  "error": (f"timed out after {timeout_s:g} s" if timed_out
                            else f"the call's process ended with status {exit_code} without an answer")}
    answer.update(stdout=_text(streams[out_read]), stderr=_text(streams[err_read]), exit_code=exit_code,
                  duration_ms=round((time.perf_counter() - started) * 1000, 3))
    return answer


def serve_child(call: Any, run_call: Callable[[Any], Any], answer_fd: int, out_fd: int, err_fd: int,
                encode: Callable[[Any], tuple[Any, bool]], describe_error: Callable[[BaseException], tuple[str, str]],
                report: Callable[[], dict[str, Any]] = dict) -> None:
    try:
        os.setsid()
        os.dup2(out_fd, 1)
        os.dup2(err_fd, 2)
        try:
            value, is_repr = encode(run_call(call))
            answer: dict[str, Any] = {"ok": True, "value": value, "value_is_repr": is_repr}
        except BaseException as exc:  # everything the call raises is its answer
            kind, message = describe_error(exc)
            answer = {"ok": False, "value": None, "value_is_repr": False, "error": message, "error_kind": kind}
        answer.update(report())
        payload = memoryview(json.dumps(answer).encode())
        while payload:
            payload = payload[os.write(answer_fd, payload):]
    finally:
        os._exit(0)


def collect(pid: int, streams: dict[int, bytearray], answer_fd: int, deadline: float, wakeup: ChildExits) -> int | None:
    """Read the pipes until all are closed and the child exited, or for a moment after it exited (something it
    started may hold them open); the child's wait status, or None when the deadline passed first."""
    open_fds = list(streams)
    status: int | None = None
    drained_by: float | None = None
    while open_fds or status is None:
        now = time.perf_counter()
        if now >= deadline and status is None:
            return None
        if drained_by is not None and now >= drained_by:
            break
        readable, _, _ = select.select([*open_fds, wakeup.fd], [], [], max(0.0, (drained_by or deadline) - now))
        for fd in readable:
            if fd == wakeup.fd:
                wakeup.drain()
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                open_fds.remove(fd)
            elif len(streams[fd]) < (ANSWER_LIMIT if fd == answer_fd else OUTPUT_CAP):
                streams[fd] += chunk
        if status is None:
            reaped, wait_status = os.waitpid(pid, os.WNOHANG)
            if reaped:
                status, drained_by = wait_status, time.perf_counter() + DRAIN_AFTER_EXIT_S
    return status


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:  # already gone
        pass


def _decode(raw: bytes) -> dict[str, Any] | None:
    try:
        answer = json.loads(raw) if raw else None
    except ValueError:
        return None
    return answer if isinstance(answer, dict) and "ok" in answer else None


def _text(data: bytearray) -> str:
    text = bytes(data[:OUTPUT_CAP]).decode("utf-8", errors="replace")
    return text + (f"\n[cut at {OUTPUT_CAP} bytes]\n" if len(data) > OUTPUT_CAP else "")
