"""ChangeFeed: the project's one stream of typed change events, published by the stores and the watcher, read by every front end."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable
from functools import partial
from typing import Union

from tui_agent.core.events import BranchChanged, CatalogChanged, FilesChanged, ToolAuthored, UsageChanged
from tui_agent.core.listeners import tell

ChangeEvent = Union[ToolAuthored, CatalogChanged, FilesChanged, BranchChanged, UsageChanged]
ChangeListener = Callable[[ChangeEvent], object]


class Subscription:
    """An async iterator over the events published after it was opened; `close()` (or leaving `async with`) ends it."""

    def __init__(self, feed: "ChangeFeed") -> None:
        self._feed = feed
        self._loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()
        self._queue: asyncio.Queue[ChangeEvent | None] = asyncio.Queue()
        self._closed = False

    def _deliver(self, event: ChangeEvent | None) -> None:
        if threading.get_ident() == self._loop_thread:
            self._queue.put_nowait(event)
        else:
            try:
                self._loop.call_soon_threadsafe(self._queue.put_nowait, event)
            except RuntimeError:  # the subscriber's loop is closed: nobody is reading any more
                self._closed = True

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._feed._drop(self)
            self._deliver(None)

    def __aiter__(self) -> AsyncIterator[ChangeEvent]:
        return self

    async def __anext__(self) -> ChangeEvent:
        if self._closed and self._queue.empty():
            raise StopAsyncIteration
        event = await self._queue.get()
        if event is None:
            raise StopAsyncIteration
        return event

    async def __aenter__(self) -> "Subscription":
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()


class ChangeFeed:
    """One per project runtime. `publish` may be called from any thread; listeners run in the publisher's thread,
    subscriptions receive on their own event loop, in publication order. A failing listener never stops the others."""

    def __init__(self) -> None:
        self._listeners: list[ChangeListener] = []
        self._subscriptions: list[Subscription] = []
        self._lock = threading.Lock()

    def publish(self, event: ChangeEvent) -> None:
        with self._lock:
            listeners, subscriptions = list(self._listeners), list(self._subscriptions)
        for listener in listeners:
            tell(partial(listener, event), "change listener")
        for subscription in subscriptions:
            subscription._deliver(event)

    def subscribe(self) -> Subscription:
        """`async with feed.subscribe() as changes: async for event in changes: ...` (call inside a running loop)."""
        subscription = Subscription(self)
        with self._lock:
            self._subscriptions.append(subscription)
        return subscription

    def add_listener(self, listener: ChangeListener) -> None:
        with self._lock:
            self._listeners.append(listener)

    def remove_listener(self, listener: ChangeListener) -> None:
        with self._lock:
            if listener in self._listeners:
                self._listeners.remove(listener)

    def _drop(self, subscription: Subscription) -> None:
        with self._lock:
            if subscription in self._subscriptions:
                self._subscriptions.remove(subscription)
