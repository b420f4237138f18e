"""A served call that a client cancels: its sandboxed run is ended at once and audited as cancelled."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio

from tui_agent.core.sandbox import ERROR_CANCELLED, RunResult

T = TypeVar("T")
GRACE_S = 5.0
"""How long the ended run may take to unwind (its process tree is killed at once; this only bounds the wait)."""


def cancelled_result(tier: str, duration_ms: float) -> RunResult:
    return RunResult(ok=False, value=None, value_is_repr=False, error="cancelled by the MCP client: the run's process "
                     "tree was killed", error_kind=ERROR_CANCELLED, stdout="", stderr="", output_truncated=False,
                     duration_ms=duration_ms, files_read=(), tier=tier, exit_code=None)


async def until_cancelled(work: Awaitable[T], on_cancelled: Callable[[float], None]) -> T:
    """Await `work` in its own task. When the caller is cancelled (the SDK cancels the handler on
    `notifications/cancelled`), cancel the task, which kills the sandboxed run, wait for it shielded from the
    caller's cancel scope, call `on_cancelled(duration_ms)`, and re-raise."""
    started = time.perf_counter()
    task = asyncio.ensure_future(work)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        with anyio.CancelScope(shield=True):
            task.cancel()
            with anyio.move_on_after(GRACE_S):
                await asyncio.wait({task})
            if task.done() and not task.cancelled() and task.exception() is None:
                pass  # it finished just before the cancel arrived: its own audit line stands
            else:
                on_cancelled((time.perf_counter() - started) * 1000)
        raise
