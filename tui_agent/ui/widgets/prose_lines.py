"""A reply's prose as Rich renders its Markdown, line by line, with the text a mouse selection covers copyable."""

from __future__ import annotations

from rich.segment import Segment
from rich.text import Text
from textual.geometry import Size
from textual.selection import Selection
from textual.strip import Strip
from textual.widget import Widget

from tui_agent.ui.widgets.rendered import RenderedMarkdown


class ProseLines(Widget):
    """Rich Markdown rendered once per width (`RenderedMarkdown`), each line carrying its text offsets, so a drag over
    part of it selects (and ctrl+c copies) the characters shown there, as Textual's own text widgets do."""

    DEFAULT_CSS = "ProseLines { height: auto; }"

    def __init__(self, rendered: RenderedMarkdown, *, classes: str | None = None) -> None:
        super().__init__(classes=classes)
        self._rendered = rendered
        self._lines: list[Strip] = []
        self._plain: list[str] = []
        self._width = -1

    def show(self, rendered: RenderedMarkdown) -> None:
        """Show other Markdown (the widget was recycled for another message)."""
        self._rendered = rendered
        self._width = -1
        self.refresh(layout=True)

    def _lines_at(self, width: int) -> list[Strip]:
        if width != self._width:
            options = self.app.console_options.update_width(width).update(highlight=False)
            segments = self._rendered.render(self.app.console, options)
            lines = list(Segment.split_and_crop_lines(segments, width, pad=False, include_new_lines=False))
            self._lines = [Strip(line) for line in lines]
            self._plain = ["".join(segment.text for segment in line if not segment.control).rstrip() for line in lines]
            self._width = width
        return self._lines

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self._lines_at(width))

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        lines = self._lines_at(width)
        if y >= len(lines):
            return Strip.blank(width, self.rich_style)
        strip = lines[y].apply_style(self.rich_style)  # the theme's colours under Rich's own
        selection = self.text_selection
        if selection is not None and (span := selection.get_span(y)) is not None:
            strip = self._highlighted(strip, *span)
        return strip.apply_offsets(0, y)

    def _highlighted(self, strip: Strip, start: int, end: int) -> Strip:
        text = Text.assemble(*((segment.text, segment.style or "") for segment in strip if not segment.control))
        text.stylize(self.screen.get_component_rich_style("screen--selection"), start, len(text) if end == -1 else end)
        return Strip(text.render(self.app.console), strip.cell_length)

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        if self._width < 0:
            self._lines_at(self.size.width)
        return selection.extract("\n".join(self._plain)), "\n"

    def selection_updated(self, selection: Selection | None) -> None:
        self.refresh()
