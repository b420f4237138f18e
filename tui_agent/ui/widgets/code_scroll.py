"""A reply's fenced code block: highlighted, never wrapped, its indentation kept, scrolled sideways when wider than the pane."""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual import events
from textual.actions import SkipAction
from textual.binding import Binding
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.selection import Selection
from textual.strip import Strip

CODE_THEME = "monokai"
TAB_SIZE = 4


class ScrollingCode(ScrollView, can_focus=True):
    """The lines of one code block, each as long as it is: shift+wheel (or a sideways wheel) scrolls it, and once
    clicked ←/→, home and end do; a mouse selection copies the code as written."""

    BINDINGS = [
        Binding("home", "scroll_line_start", "Line start", show=False),
        Binding("end", "scroll_line_end", "Line end", show=False),
    ]
    DEFAULT_CSS = """
    ScrollingCode {
        height: auto;
        width: 1fr;
        overflow-x: auto;
        overflow-y: hidden;
        padding: 1 1 0 1;
        margin: 1 0;
        background: #272822;
        scrollbar-size-horizontal: 1;
    }
    ScrollingCode:focus { background-tint: $foreground 5%; }
    """

    def __init__(self, code: str, language: str) -> None:
        super().__init__()
        self._code = ""
        self._lines: list[Text] = []
        self._background = Style()
        self.show(code, language)

    def show(self, code: str, language: str) -> None:
        """Show another block (the widget was recycled for another message)."""
        from rich.syntax import Syntax  # pygments loads with the first code block shown

        self._code = code.expandtabs(TAB_SIZE)
        syntax = Syntax(self._code, language or "text", theme=CODE_THEME)
        self._background = syntax.get_theme(CODE_THEME).get_background_style()
        highlighted = syntax.highlight(self._code)
        highlighted.rstrip()
        self._lines = list(highlighted.split("\n", allow_blank=True))
        widest = max((line.cell_len for line in self._lines), default=0)
        self.virtual_size = Size(widest, len(self._lines))
        self.scroll_to(x=0, animate=False, immediate=True)
        self.refresh(layout=True)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        """The lines and a row under them: blank, or the scrollbar of a block wider than the pane (which Textual adds
        to the height itself once it shows)."""
        return len(self._lines) + (0 if self.show_horizontal_scrollbar else 1)

    def render_line(self, y: int) -> Strip:
        scroll_x = int(self.scroll_x)
        width = self.scrollable_content_region.width
        if y >= len(self._lines):
            return Strip.blank(width, self._background)
        line = self._lines[y]
        selection = self.text_selection
        if selection is not None and (span := selection.get_span(y)) is not None:
            start, end = span
            line = line.copy()
            line.stylize(self.screen.get_component_rich_style("screen--selection"), start, len(line) if end == -1 else end)
        strip = Strip(line.render(self.app.console), line.cell_len).apply_style(self._background)
        return strip.crop_extend(scroll_x, scroll_x + width, self._background).apply_offsets(scroll_x, y)

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        return selection.extract(self._code), "\n"

    def selection_updated(self, selection: Selection | None) -> None:
        self.refresh()

    def _on_mouse_scroll_right(self, event: events.MouseScrollRight) -> None:
        event.prevent_default()  # instead of Textual's own step (animated): one notch, one step, as shift+wheel moves
        if self._scroll_right_for_pointer(animate=False):  # not animated: a burst of wheel events all count
            event.stop()

    def _on_mouse_scroll_left(self, event: events.MouseScrollLeft) -> None:
        event.prevent_default()
        if self._scroll_left_for_pointer(animate=False):
            event.stop()

    def action_scroll_line_start(self) -> None:
        if not self.allow_horizontal_scroll:
            raise SkipAction()  # a block that fits: home is the conversation's
        self.scroll_to(x=0, animate=False)

    def action_scroll_line_end(self) -> None:
        if not self.allow_horizontal_scroll:
            raise SkipAction()
        self.scroll_to(x=self.max_scroll_x, animate=False)
