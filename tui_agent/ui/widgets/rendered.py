"""Rich Markdown of a finished message, parsed once and rendered once per width (a widget measures, then draws it)."""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING

from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.segment import Segment

from tui_agent.ui.widgets.reply_parts import parts_of

if TYPE_CHECKING:
    from rich.markdown import Markdown

CACHED_MESSAGES = 64
"""How many messages keep their rendered lines: over a conversation's mounted window and its prerendered edges."""


class RenderedMarkdown:
    """A Rich renderable: `text` as Markdown, parsed on first use, its segments kept per width.

    Textual renders a widget's content twice when it first shows it (to measure its height, then to draw it), and
    the conversation renders the messages next to its window ahead of time; all of them reuse one render."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._markdown: Markdown | None = None
        self._segments: dict[int, list[Segment]] = {}

    @property
    def markdown(self) -> Markdown:
        if self._markdown is None:
            # markdown-it loads with the first message shown, not at startup
            from tui_agent.ui.widgets.code_fence import IndentedMarkdown

            self._markdown = IndentedMarkdown(self.text, code_theme="monokai")
        return self._markdown

    def rendered_at(self, width: int) -> bool:
        return width in self._segments

    def render(self, console: Console, options: ConsoleOptions) -> list[Segment]:
        """The segments at `options.max_width`, rendered now unless they were already."""
        width = options.max_width
        segments = self._segments.get(width)
        if segments is None:
            segments = self._segments[width] = list(console.render(self.markdown, options))
            self._markdown = None  # its parse tree: thousands of objects each full garbage collection would walk
        return segments

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield from self.render(console, options)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement.get(console, options, self.markdown)


class RenderedCache:
    """The newest messages' `RenderedMarkdown`, by entry identity (a recycled widget or a prefetch finds it again)."""

    def __init__(self, size: int = CACHED_MESSAGES) -> None:
        self._size = size
        self._items: OrderedDict[tuple[int, int], tuple[object, RenderedMarkdown]] = OrderedDict()

    def get(self, owner: object, text: str, part: int = 0) -> RenderedMarkdown:
        """The renderable of `owner`'s `text`, its `part`th (a new one when the text changed or it was evicted)."""
        key = (id(owner), part)
        held = self._items.get(key)
        if held is not None and held[0] is owner and held[1].text == text:
            self._items.move_to_end(key)
            return held[1]
        rendered = RenderedMarkdown(text)
        self._items[key] = (owner, rendered)
        self._items.move_to_end(key)
        while len(self._items) > self._size:
            self._items.popitem(last=False)
        return rendered

    def clear(self) -> None:
        self._items.clear()


rendered_messages = RenderedCache()


def prose_renderings(owner: object, text: str) -> list[RenderedMarkdown]:
    """The renderables of the prose parts of `owner`'s reply `text` (its code blocks are widgets of their own)."""
    return [rendered_messages.get(owner, part.text, index) for index, part in enumerate(parts_of(text)) if part.kind == "prose"]
