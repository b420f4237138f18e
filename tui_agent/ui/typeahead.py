"""Typing that goes on when a question pops up over the prompt box: it continues into the box, never answers the question."""

from __future__ import annotations

import time
from typing import Any, Protocol, TypeVar, runtime_checkable

from textual import events
from textual.screen import ModalScreen, Screen

from tui_agent.ui.typed import typed_text

Answer = TypeVar("Answer")

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
        typed = typed_text(event)
        if typed is not None:
            self.box.insert(typed)
        elif event.key == "backspace":
            self.box.action_delete_left()
        self.passed_on += 1
        return True


NOTICE = "Your typing went on into the prompt box: after a pause, a key answers this question."


def typing_below(screen: Screen[Any]) -> TypeAhead:
    """The typing a question (`screen`, just pushed) pops up over: the focused widget of the screen below it."""
    stack = screen.app.screen_stack
    return TypeAhead(stack[-2].focused if len(stack) > 1 and stack[-1] is screen else None)


def keep_typing(screen: Screen[Any], type_ahead: TypeAhead, event: events.Key) -> bool:
    """A question's `on_key`: True when `event` continued the typing (it went into the prompt box, not to the
    question's keys or buttons); the first such key brings a notice saying so."""
    if not type_ahead.take(event):
        return False
    event.stop()
    event.prevent_default()
    if type_ahead.passed_on == 1:
        screen.notify(NOTICE, severity="warning")
    return True


class QuestionScreen(ModalScreen[Answer]):
    """A question that pops up over the prompt box (the approval, confirm, trust and git screens): keys of typing that
    goes on go into the box; after a pause a key answers (`answer_key`, or the screen's bindings)."""

    def __init__(self, *, classes: str | None = None) -> None:
        super().__init__(classes=classes)
        self.type_ahead = TypeAhead(None)
        """The typing this pops up over, found when shown (typing_below); until then no key is taken."""

    def on_mount(self) -> None:
        self.type_ahead = typing_below(self)

    def on_key(self, event: events.Key) -> None:
        if not keep_typing(self, self.type_ahead, event):
            self.answer_key(event)

    def answer_key(self, event: events.Key) -> None:
        """A key that is not typing: a screen whose answers are not all bindings takes it here."""
