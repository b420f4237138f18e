"""Helpers (no tests) for tests of a CLI beside an open tuiagent: a real process holding `open_runtime` on a project
(what the TUI holds: catalog, watcher, drift watch), and the real CLI in its own process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


HOLDER = textwrap.dedent("""
    import asyncio, contextlib, signal, sys
    from tui_agent.core.runtime import open_runtime

    async def main() -> None:
        for signum in (signal.SIGINT, signal.SIGTERM):  # through the loop, as the CLI does (commands/cancel_signals.py)
            asyncio.get_running_loop().add_signal_handler(signum, asyncio.current_task().cancel)
        async def approve(*_args, **_kwargs):
            return True
        runtime = await open_runtime(sys.argv[1], approve=approve)  # watching, as the TUI does
        if len(sys.argv) > 2:
            runtime.workshop.catalog.settle.settle_s = float(sys.argv[2])  # a settle window the CLI surely runs inside
        await asyncio.wait_for(runtime.workshop.watcher.ready.wait(), 60)
        print("ready", flush=True)
        try:
            await asyncio.sleep(3600)
        finally:
            await runtime.aclose()

    with contextlib.suppress(asyncio.CancelledError):  # stopped by a signal, closed
        asyncio.run(main())
""")


def cli_env() -> dict[str, str]:
    """The environment a child process needs to import this checkout's tui_agent and tests."""
    return {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}


@contextmanager
def open_tuiagent(repo: Path, settle_s: float | None = None, *,
                  stop: signal.Signals = signal.SIGTERM) -> Iterator[subprocess.Popen[str]]:
    """A process with `open_runtime` on `repo` (its settle window `settle_s` when given), yielded once its watcher
    is ready; `stop` is sent to its whole process group at the end (SIGKILL: a crash, no clean-up)."""
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(repo), *([] if settle_s is None else [str(settle_s)])],
                              env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                              start_new_session=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        yield holder
    finally:
        os.killpg(holder.pid, stop)
        holder.wait(timeout=30)


def run_cli(repo: Path, *argv: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """`tuiagent --project REPO ARGV…` in its own process."""
    return subprocess.run([sys.executable, "-m", "tui_agent.cli", "--project", str(repo), *argv], env=cli_env(),
                          capture_output=True, text=True, timeout=timeout)
