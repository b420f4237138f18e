"""A tool call run as its own task, so that what it shows while it runs (ToolOutputDelta) goes out before its result."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Coroutine
from typing import Any

from tui_agent.core.agent.toolbase import ToolContext, ToolOutput
from tui_agent.core.events import Event, ToolOutputDelta


class LiveCall:
    """Starts `work` at once; `events()` yields the live events the call hands to `context.live` until it ends, then
    `output()` is its result. Leaving `events()` early (the turn cancelled, the stream closed) cancels the call and
    waits for it, so the sandbox has killed the command before the cancellation goes on."""

    def __init__(self, work: Coroutine[Any, Any, ToolOutput], context: ToolContext) -> None:
        self._pending: list[Event] = []
        self._ready = asyncio.Event()
        context.live = self._show
        self._task = asyncio.ensure_future(work)

    def _show(self, event: Event) -> None:
        self._pending.append(event)
        self._ready.set()

    async def events(self) -> AsyncIterator[Event]:
        try:
            while True:
                if not self._pending and not self._task.done():
                    waiter = asyncio.ensure_future(self._ready.wait())
                    try:
                        await asyncio.wait({self._task, waiter}, return_when=asyncio.FIRST_COMPLETED)
                    finally:
                        waiter.cancel()
                self._ready.clear()
                batch, self._pending = self._pending, []
                for event in coalesced(batch):
                    yield event
                if self._task.done() and not self._pending:
                    return
        finally:
            if not self._task.done():
                self._task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await self._task

    def output(self) -> ToolOutput:
        return self._task.result()


def coalesced(events: list[Event]) -> list[Event]:
    """Consecutive output deltas of one call as one (a chatty command is shown in as few updates as the reader keeps up with)."""
    merged: list[Event] = []
    for event in events:
        last = merged[-1] if merged else None
        if isinstance(event, ToolOutputDelta) and isinstance(last, ToolOutputDelta) and last.call_id == event.call_id:
            merged[-1] = ToolOutputDelta(event.call_id, last.text + event.text)
        else:
            merged.append(event)
    return merged
