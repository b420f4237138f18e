"""Helper for tests (no tests here): the real `tuiagent` CLI run in this process, its stdout and stderr captured.

For tests whose subject is what a command does, not its process: an interpreter start and the SDK's import cost about
0.5 s a command (more on a loaded machine). An exception escaping `main` fails the test, as a traceback would."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import io
import subprocess

from tui_agent.cli import main


def run_in_process(*argv: str) -> subprocess.CompletedProcess[str]:
    """`tuiagent ARGV` through `main`, returned as `subprocess.run(..., capture_output=True, text=True)` would.

    From a coroutine (an event loop runs in this thread) it runs in a thread of its own, since `main` starts its own
    loop; the caller waits for it as it waited for the process."""
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)
    err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)
    codes: list[int] = []

    def run() -> None:
        codes.append(main(list(argv)))

    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        if loop_running():
            with concurrent.futures.ThreadPoolExecutor(1) as pool:
                pool.submit(run).result()
        else:
            run()
    return subprocess.CompletedProcess(["tuiagent", *argv], codes[0], read_back(out), read_back(err))


def loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def read_back(stream: io.TextIOWrapper) -> str:
    stream.flush()
    buffer = stream.buffer
    assert isinstance(buffer, io.BytesIO)
    return buffer.getvalue().decode("utf-8")
