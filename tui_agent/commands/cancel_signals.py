"""SIGTERM and SIGHUP end a headless run the way Ctrl-C does: the running turn is cancelled (its processes killed, its transcript closed)."""

from __future__ import annotations

import asyncio
import signal

CANCEL_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


def cancel_current_task_on_signals() -> None:
    """Make SIGTERM and SIGHUP cancel the calling task (asyncio.run already does so for SIGINT)."""
    task = asyncio.current_task()
    assert task is not None
    loop = asyncio.get_running_loop()
    for signum in CANCEL_SIGNALS:
        loop.add_signal_handler(signum, task.cancel)
