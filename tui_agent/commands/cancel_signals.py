"""SIGINT, SIGTERM and SIGHUP end a headless run alike: the running turn is cancelled (its processes killed, its transcript closed)."""

from __future__ import annotations

import asyncio
import signal

CANCEL_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def cancel_current_task_on_signals() -> None:
    """Make each of CANCEL_SIGNALS cancel the calling task through the event loop. SIGINT too: `asyncio.run`'s own
    Ctrl-C handler runs only when the main thread next executes Python code, and a signal the kernel hands to another
    thread (any of ours may take it) does not wake a main thread sleeping in the loop's select; the loop's handlers
    wake it through its self-pipe (the signal wakeup fd) whichever thread took the signal."""
    task = asyncio.current_task()
    assert task is not None
    loop = asyncio.get_running_loop()
    for signum in CANCEL_SIGNALS:
        loop.add_signal_handler(signum, task.cancel)
