"""The assistant's reply while it streams: a Textual Markdown widget fed in batches (imported on the first reply)."""

from __future__ import annotations

import asyncio

from textual.timer import Timer
from textual.widgets import Markdown
from textual.widgets.markdown import MarkdownStream

from tui_agent.ui.widgets.entry import Entry


class AssistantMessage(Markdown):
    """Assistant text while it streams: chunks are batched (at most every FLUSH_S) into a `MarkdownStream`.

    It starts empty and is fed every chunk of its entry's text (the transcript keeps the entry's text). The timer's
    flush runs in the timer's own task, beside `finish` (the conversation's): one at a time, so `finish` never stops a
    stream whose task a flush has just created and which has not run yet (stopping it raised CancelledError in the
    conversation's handler, which ended the conversation's message loop)."""

    FLUSH_S = 0.05

    def __init__(self, entry: Entry) -> None:
        super().__init__("", classes="message assistant" + (" -continued" if entry.continued else ""))
        self.entry = entry
        self._stream: MarkdownStream | None = None
        self._buffer: list[str] = []
        self._flush_timer: Timer | None = None
        self._writing = asyncio.Lock()

    async def append_text(self, chunk: str) -> None:
        self._buffer.append(chunk)
        if self._flush_timer is None:
            self._flush_timer = self.set_timer(self.FLUSH_S, self._flush)

    async def _flush(self) -> None:
        self._flush_timer = None
        async with self._writing:
            await self._write_buffer()

    async def _write_buffer(self) -> None:
        if not self._buffer:
            return
        text = "".join(self._buffer)
        self._buffer.clear()
        if self._stream is None:
            self._stream = Markdown.get_stream(self)
        await self._stream.write(text)

    async def finish(self) -> None:
        if self._flush_timer is not None:
            self._flush_timer.stop()
            self._flush_timer = None
        async with self._writing:
            await self._write_buffer()
            if self._stream is not None:
                stream, self._stream = self._stream, None
                await stream.stop()
