"""Shows a tool's (or recipe's) source, syntax-highlighted, in a scrollable modal."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from tui_agent.ui.diffs import highlighted_source


class SourceScreen(ModalScreen[None]):
    """Read-only source view; Escape or q closes it."""

    BINDINGS = [Binding("escape,q", "close", "Close")]
    AUTO_FOCUS = "#source-scroll"  # (a query in on_mount raised when the app quit while this was being mounted)

    def __init__(self, title: str, source: str, *, lexer: str = "python") -> None:
        super().__init__()
        self.title_text = title
        self.source = source
        self.lexer = lexer

    def compose(self) -> ComposeResult:
        with Vertical(id="source-dialog", classes="dialog"):
            yield Static(f"[b]{self.title_text}[/b]  [dim]esc to close[/dim]", id="source-title")
            with VerticalScroll(id="source-scroll"):
                yield Static(highlighted_source(self.source, self.lexer))

    def action_close(self) -> None:
        self.dismiss(None)
