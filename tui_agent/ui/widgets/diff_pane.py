"""The diff pane: a titled, scrollable, syntax-coloured diff with unified and side-by-side views."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.lazy import Lazy
from textual.reactive import reactive
from textual.widgets import Static

from tui_agent.ui.diffs import diff_stats, render_side_by_side, render_unified


SIDE_BY_SIDE_MIN_WIDTH = 100
"""Narrower than this, side-by-side halves wrap into noise: the pane shows the unified view (and says why)."""


class DiffPane(Vertical):
    """Shows one diff (a tool's history, its drift, or the turn's edits); `m` switches the view mode."""

    BINDINGS = [Binding("m", "toggle_mode", "Unified/side-by-side")]

    mode: reactive[str] = reactive("unified")

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.title = "Diff"
        self.diff_text = ""
        self.subject = ""
        self._rendered_mode = ""
        self.scroll = VerticalScroll(id="diff-scroll", can_focus=True)
        self.body = Static(Text("Nothing to show yet: pick a tool's history (h) or drift (f), or /diff for this turn's edits.",
                                style="dim italic"), id="diff-body")

    def compose(self) -> ComposeResult:
        yield Static("", id="diff-title", classes="pane-title")
        with Lazy(self.scroll):  # mounted just after the first frame, with what it has been given to show by then
            yield self.body

    def show(self, title: str, diff_text: str, *, subject: str = "") -> None:
        """Display `diff_text` (unified format) under `title`."""
        self.title = title
        self.diff_text = diff_text
        self.subject = subject
        self._render_diff()
        if self.scroll.is_mounted:
            self.scroll.scroll_home(animate=False)

    def _render_diff(self) -> None:
        if not self.is_mounted:
            return
        header = Text()
        header.append(self.title, style="bold")
        if self.diff_text:
            added, deleted = diff_stats(self.diff_text)
            header.append(f"   +{added}", style="green")
            header.append(f" -{deleted}", style="red")
        shown = self.shown_mode
        squeezed = ": too narrow for side-by-side (F5 zooms)" if shown != self.mode else ""
        header.append(f"   [{shown}{squeezed}]  m: switch", style="dim")
        self.query_one("#diff-title", Static).update(header)
        self._rendered_mode = shown
        if not self.diff_text and self.title == "Diff":
            return
        body = render_side_by_side(self.diff_text) if shown == "side-by-side" else render_unified(self.diff_text)
        self.body.update(body)

    @property
    def shown_mode(self) -> str:
        """The chosen mode, but unified while the pane is too narrow for two readable halves."""
        if self.mode == "side-by-side" and 0 < self.size.width < SIDE_BY_SIDE_MIN_WIDTH:
            return "unified"
        return self.mode

    def on_mount(self) -> None:
        self._render_diff()

    def on_resize(self) -> None:
        if self.shown_mode != self._rendered_mode:
            self._render_diff()

    def watch_mode(self) -> None:
        self.set_class(self.mode == "side-by-side", "-side-by-side")
        self._render_diff()

    def action_toggle_mode(self) -> None:
        self.mode = "side-by-side" if self.mode == "unified" else "unified"
