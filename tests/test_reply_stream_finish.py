"""A streamed reply's flush runs in its timer's task, beside the conversation finishing the reply: finishing while a
flush has just started the Markdown stream must neither raise nor lose text (a CancelledError out of `finish` ended
the conversation's message loop, and the widget with it: `#conversation` not found mid-turn under load)."""

from __future__ import annotations

import asyncio

from textual.app import App, ComposeResult
from textual.widgets import Markdown

from tui_agent.ui.widgets.entry import Entry
from tui_agent.ui.widgets.streaming import AssistantMessage


class OneReply(App[None]):
    def __init__(self, message: AssistantMessage) -> None:
        super().__init__()
        self.message = message

    def compose(self) -> ComposeResult:
        yield self.message


def shown_text(message: AssistantMessage) -> str:
    return message.source


async def test_finishing_while_the_timer_flush_starts_the_stream_shows_everything() -> None:
    message = AssistantMessage(Entry("assistant"))
    async with OneReply(message).run_test() as pilot:
        await message.append_text("Reading the readme, ")
        await message.append_text("then the files.")
        timer = message._flush_timer
        assert timer is not None
        timer.stop()
        # the timer's tick (its callback, in the timer's own task) and the conversation's finish, due in the same turn
        # of the loop: the flush starts the Markdown stream's task, finish stops that stream before the task ran
        flush = asyncio.create_task(message._flush())
        finish = asyncio.create_task(message.finish())
        await asyncio.gather(flush, finish)
        await pilot.pause()
        assert shown_text(message) == "Reading the readme, then the files."
        assert isinstance(message, Markdown) and message.is_attached
