"""The conversation pane: core events folded into its transcript and shown live (replies streamed, tool blocks refreshed)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.widget import Widget

from tui_agent.core.events import Event
from tui_agent.ui.event_messages import ShowEvent
from tui_agent.ui.transcript import Folded
from tui_agent.ui.widgets.entry_window import EntryWindow
from tui_agent.ui.widgets.messages import Entry, ToolCallBlock, widget_for, widget_type_for

if TYPE_CHECKING:
    from tui_agent.ui.widgets.streaming import AssistantMessage


class Conversation(EntryWindow):
    """The transcript as it happens, over the window of mounted entries (`EntryWindow`) that scrolling slides."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._streaming: AssistantMessage | None = None

    async def add(self, entry: Entry) -> Widget:
        """Append an entry that no event made (the app's own notices, a manual tool run) and its widget."""
        async with self._updating:
            self.transcript.add(entry)
            await self._finish_widget()
            return await self._show_new(entry)

    async def echo_prompt(self, prompt: str) -> None:
        """Show the person's prompt at once (see `Transcript.echo_prompt`)."""
        async with self._updating:
            entry = self.transcript.echo_prompt(prompt)
            await self._finish_widget()
            await self._show_new(entry)

    async def on_show_event(self, message: ShowEvent) -> None:
        """A core event posted by the turn runner or the change feed: shown in the order posted, its sender told when."""
        error: Exception | None = None
        try:
            await self.show_event(message.event)
        except Exception as exc:  # a turn's sender gets it; the feed's events have nobody waiting, so it is said here
            error = exc
            if not message.awaited:
                self.notify(f"could not show an event: {type(exc).__name__}: {exc}", severity="error")
        finally:
            message.done(error)

    async def show_event(self, event: Event) -> Folded:
        """Fold a core event into the transcript and show what it changed: new widgets, streamed text, refreshed ones."""
        async with self._updating:
            folded = self.transcript.apply(event)
            for entry, chunk in folded.text:
                if any(entry is new for new in folded.added) and id(entry) not in self._widgets:  # a new reply
                    await self._finish_widget()
                    await self._show_new(entry)
                if self._streaming is not None and self._streaming.entry is entry:
                    await self._streaming.append_text(chunk)
                    self._note_new_content()
                else:  # its live widget is gone (the turn was cancelled meanwhile, or a window slide showed it)
                    self.refresh_entry(entry)
            if self._streaming is not None and self._streaming.entry is not self.transcript.open_text:
                await self._finish_widget()
            for entry in folded.added:
                await self._show_new(entry)
            for entry in folded.changed:
                self.refresh_entry(entry)
            self._show_live(folded.live)
            return folded

    def _show_live(self, entries: list[Entry]) -> None:
        for entry in entries:
            widget = self._widgets.get(id(entry))
            if isinstance(widget, ToolCallBlock):
                widget.show_live()

    async def _show_new(self, entry: Entry) -> Widget:
        """Mount the widget of an entry the transcript just appended, after the newest shown ones."""
        shown = self._widgets.get(id(entry))
        if shown is not None:
            return shown  # shown already (sliding the window down while we waited mounted it)
        index = next(i for i in range(len(self.entries) - 1, -1, -1) if self.entries[i] is entry)
        if self.last_mounted != index:
            await self.jump_to_end(pending=len(self.entries) - index)
        self.last_mounted = index + 1
        widget: Widget
        if entry is self.transcript.open_text:
            from tui_agent.ui.widgets.streaming import AssistantMessage  # Markdown loads with the first reply

            widget = self._streaming = AssistantMessage(entry)
            self._widgets[id(entry)] = widget
        else:
            widget = self._make(entry)
        await self.mount(widget, before=self._later)
        self._update_markers()
        self._note_new_content()
        return widget

    async def finish_stream(self) -> None:
        """End the reply being streamed (text that follows starts a new entry) and make its widget a light one."""
        async with self._updating:
            self.transcript.close_text()
            await self._finish_widget()

    async def _finish_widget(self) -> None:
        """Swap the live Markdown stream's widget tree for one light widget with the same text."""
        if self._streaming is not None:
            message, self._streaming = self._streaming, None
            await message.finish()
            if message.is_attached and message.parent is self:
                light = widget_for(message.entry)
                self._widgets[id(message.entry)] = light
                await self.mount(light, after=message)
                await message.remove()

    def refresh_entry(self, entry: Entry) -> None:
        """Show an entry's current fields in its widget, if it has one."""
        widget = self._widgets.get(id(entry))
        if isinstance(widget, ToolCallBlock):
            widget.refresh_entry()
        elif widget is not None and widget is not self._streaming and type(widget) is not widget_type_for(entry):
            self._replace(widget, entry)  # a reply's text changed, and with it whether it has code blocks
        elif widget is not None and widget is not self._streaming:
            widget.rebind(entry)  # type: ignore[attr-defined]

    def _replace(self, widget: Widget, entry: Entry) -> None:
        replacement = widget_for(entry)
        self._widgets[id(entry)] = replacement
        self.mount(replacement, after=widget)
        widget.remove()

    def show_result(self, entry: Entry) -> None:
        """A call run outside a turn (a catalog run, a `!command`) has finished: its block unfolds with the result, and
        the whole pane is repainted (no stale line left where the block grew)."""
        widget = self._widgets.get(id(entry))
        if isinstance(widget, ToolCallBlock):
            widget.collapsed = False
            widget.refresh_entry()
        self.refresh(layout=True)

    def mark_undone(self, turns: list[tuple[str, bool]]) -> None:
        """`turns`: every recorded turn's (prompt, undone), oldest first; the entries whose mark changed are redrawn."""
        for entry in self.transcript.mark_undone(turns):
            self.refresh_entry(entry)

    def tool_entry(self, call_id: str) -> Entry | None:
        return self.transcript.tool_entry(call_id)

    def tool_block(self, call_id: str) -> ToolCallBlock | None:
        entry = self.transcript.tool_entry(call_id)
        widget = self._widgets.get(id(entry)) if entry is not None else None
        return widget if isinstance(widget, ToolCallBlock) else None

    def tool_entries(self) -> list[Entry]:
        return self.transcript.tool_entries()

    def refresh_tool(self, call_id: str) -> None:
        block = self.tool_block(call_id)
        if block is not None:
            block.refresh_entry()

    @property
    def streaming(self) -> bool:
        """A reply is being streamed into its live Markdown widget."""
        return self._streaming is not None
