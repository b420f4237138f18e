"""Typing that goes on when a question pops up over the prompt box: it continues into the box, never answers the question."""

from __future__ import annotations

import time
from typing import Protocol, runtime_checkable

from textual import events

TYPE_AHEAD_S = 0.6
"""A key within this long of the previous one typed is still that typing (a person reading a question pauses longer)."""


@runtime_checkable
class TypingBox(Protocol):
    """What the prompt box offers: its text, when a character was last typed into it, and editing."""

    text: str
    last_typed: float | None

    def insert(self, text: str) -> object: ...

    def action_delete_left(self) -> None: ...


class TypeAhead:
    """Keys that arrive while the person is still typing in `box` (it holds text, and its last key came less than
    TYPE_AHEAD_S before) go on into it; a pause ends the typing, and the next key answers."""

    def __init__(self, box: object) -> None:
        self.box: TypingBox | None = None
        self.last = 0.0
        if isinstance(box, TypingBox) and box.last_typed is not None and box.text.strip():
            self.box, self.last = box, box.last_typed
        self.passed_on = 0
        """How many keys went on into the box."""

    def take(self, event: events.Key) -> bool:
        """True when `event` continues the typing: it then went on into the box (Escape never does: it only denies)."""
        now = time.monotonic()
        if self.box is None or event.key == "escape" or now - self.last >= TYPE_AHEAD_S:
            return False
        self.last = now
        if event.is_printable and event.character:
            self.box.insert(event.character)
        elif event.key == "backspace":
            self.box.action_delete_left()
        self.passed_on += 1
        return True
