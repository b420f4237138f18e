"""The message that carries a core event to the conversation, which folds it in and shows it; its sender can wait
until it is shown, so what comes next (an approval, the cancel mark, the turn's end) is drawn after it."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:
    from tui_agent.core.events import Event

SETTLE_S = 5.0
"""How long a cancelled turn waits for its last posted event to be shown before it draws the cancel mark."""


class ShowEvent(Message, bubble=False):
    """A core event (the agent's turn, a recipe's call, the change feed) for the conversation to show; `shown` is set
    once it is, or once showing it failed (`error`). Posted to the conversation only: it does not bubble."""

    def __init__(self, event: Event, *, awaited: bool = True) -> None:
        super().__init__()
        self.event = event
        self.awaited = awaited
        """Its sender waits for it and gets `error`; otherwise the conversation reports a failure itself."""
        self.shown = asyncio.Event()
        self.error: Exception | None = None

    def done(self, error: Exception | None = None) -> None:
        """The conversation has shown it (or failed to: `error`)."""
        self.error = error
        self.shown.set()


class EventPoster:
    """Posts core events to the conversation as ShowEvent messages: a turn's one at a time, each awaited until shown;
    the change feed's without waiting (the conversation's message queue keeps them all in the order posted)."""

    def __init__(self, post: Callable[[Message], bool]) -> None:
        self.post = post
        """The conversation's `post_message` (looked up when used: the widget is composed after the controllers)."""
        self._in_flight: ShowEvent | None = None

    async def show(self, event: Event) -> None:
        """Post `event` and wait until it is shown; a failure to show it is raised here."""
        message = self._in_flight = ShowEvent(event)
        if not self.post(message):  # the conversation is closing (the app quits): nothing will show it
            return
        await message.shown.wait()
        self._in_flight = None
        if message.error is not None:
            raise message.error

    def show_later(self, event: Event) -> None:
        """Post `event` behind whatever is already posted; the conversation reports a failure to show it."""
        self.post(ShowEvent(event, awaited=False))

    async def settle(self) -> None:
        """A cancelled turn: wait (bounded) for the event it was waiting on to be shown, so its marks come after it."""
        message, self._in_flight = self._in_flight, None
        if message is not None:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.shield(message.shown.wait()), SETTLE_S)
