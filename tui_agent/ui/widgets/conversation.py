"""The conversation pane: a scrolling list of entries that mounts only the most recent ones (older ones load on demand)."""

from __future__ import annotations

from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Static

from tui_agent.ui.widgets.messages import AssistantMessage, Entry, ToolCallBlock, widget_for

MOUNTED_WINDOW = 80
LOAD_STEP = 40


class EarlierMarker(Static):
    """Stands in for the older entries that are not mounted; clicking it (or scrolling to the top) loads more."""

    def on_click(self) -> None:
        conversation = self.parent
        if isinstance(conversation, Conversation):
            conversation.load_earlier()


class Conversation(VerticalScroll, can_focus=True):
    """Entries as plain data; widgets exist for the last `MOUNTED_WINDOW` of them plus whatever was loaded."""

    BINDINGS = [Binding("ctrl+u", "load_earlier", "Earlier", show=False)]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.entries: list[Entry] = []
        self.first_mounted = 0
        self._marker = EarlierMarker("", classes="earlier")
        self._streaming: AssistantMessage | None = None
        self._tool_blocks: dict[str, ToolCallBlock] = {}

    def on_mount(self) -> None:
        self.anchor()

    def _update_marker(self) -> None:
        hidden = self.first_mounted
        self._marker.update(f"▲ {hidden:,} earlier messages — scroll up or press ctrl+u to load more")
        self._marker.display = hidden > 0

    async def load_entries(self, entries: list[Entry]) -> None:
        """Replace everything with `entries` (a resumed session); mounts only the newest window."""
        await self.clear()
        self.entries = list(entries)
        self.first_mounted = max(0, len(self.entries) - MOUNTED_WINDOW)
        await self.mount(self._marker)
        await self.mount_all([widget_for(entry) for entry in self.entries[self.first_mounted :]])
        self._update_marker()
        self.anchor()

    async def clear(self) -> None:
        await self.finish_stream()
        await self.remove_children()
        self.entries = []
        self.first_mounted = 0
        self._tool_blocks.clear()
        self._marker = EarlierMarker("", classes="earlier")

    def load_earlier(self, count: int = LOAD_STEP) -> None:
        if self.first_mounted == 0:
            return
        start = max(0, self.first_mounted - count)
        widgets = [widget_for(entry) for entry in self.entries[start : self.first_mounted]]
        self.first_mounted = start
        self.release_anchor()
        self.mount_all(widgets, after=self._marker)
        self._update_marker()

    def action_load_earlier(self) -> None:
        self.load_earlier()

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        if new <= 0 and old > 0 and self.first_mounted > 0:
            self.load_earlier()

    async def add(self, entry: Entry) -> Widget:
        """Append an entry and its widget."""
        if not self._marker.is_attached:
            await self.mount(self._marker)
            self._update_marker()
        await self.finish_stream()
        self.entries.append(entry)
        widget = widget_for(entry)
        if isinstance(widget, ToolCallBlock) and entry.call_id:
            self._tool_blocks[entry.call_id] = widget
        await self.mount(widget)
        return widget

    async def add_text(self, chunk: str) -> None:
        """Stream assistant text into the current assistant message (starting one if needed)."""
        if self._streaming is None:
            await self.finish_stream()
            entry = Entry("assistant")
            self.entries.append(entry)
            self._streaming = AssistantMessage(entry)
            await self.mount(self._streaming)
        await self._streaming.append_text(chunk)

    async def finish_stream(self) -> None:
        if self._streaming is not None:
            message, self._streaming = self._streaming, None
            await message.finish()

    def tool_block(self, call_id: str) -> ToolCallBlock | None:
        return self._tool_blocks.get(call_id)

    @property
    def streaming(self) -> bool:
        return self._streaming is not None
