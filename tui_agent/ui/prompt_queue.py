"""Prompts waiting their turn (typed while the project opens or while a turn runs): kept in order, never dropped."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class QueuedPrompt:
    """One waiting prompt and who queued it ("person" typed it, "recipe" handed it over)."""

    text: str
    source: str = "person"


class PromptQueue:
    """A FIFO of prompts; listeners are told after every change (a UI can show the queue)."""

    def __init__(self) -> None:
        self._items: deque[QueuedPrompt] = deque()
        self._listeners: list[Callable[[], None]] = []

    def push(self, text: str, source: str = "person") -> QueuedPrompt:
        item = QueuedPrompt(text, source)
        self._items.append(item)
        self._changed()
        return item

    def pop(self) -> QueuedPrompt | None:
        """The oldest waiting prompt, removed from the queue; None when empty."""
        if not self._items:
            return None
        item = self._items.popleft()
        self._changed()
        return item

    def push_front(self, item: QueuedPrompt) -> None:
        """Put a prompt back at the head (it could not be sent after all)."""
        self._items.appendleft(item)
        self._changed()

    def remove(self, index: int) -> QueuedPrompt:
        item = self._items[index]
        del self._items[index]
        self._changed()
        return item

    def clear(self) -> list[QueuedPrompt]:
        items = list(self._items)
        self._items.clear()
        self._changed()
        return items

    def add_listener(self, listener: Callable[[], None]) -> None:
        self._listeners.append(listener)

    def __len__(self) -> int:
        return len(self._items)

    def __bool__(self) -> bool:
        return bool(self._items)

    def __iter__(self) -> Iterator[QueuedPrompt]:
        return iter(list(self._items))

    def _changed(self) -> None:
        for listener in list(self._listeners):
            listener()
