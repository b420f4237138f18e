"""A yes/no confirmation modal (prune a tool, run a tool that writes or uses the network, create a git repository)."""

from __future__ import annotations

from rich.console import RenderableType
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Static

from tui_agent.ui.screens.scroll_keys import SCROLLS, scroll, scroll_bindings
from tui_agent.ui.typeahead import QuestionScreen


class ConfirmScreen(QuestionScreen[bool]):
    """Dismisses with True on yes, False on no or Escape."""

    BINDINGS = [Binding("y", "answer(True)", "Yes"), Binding("n,escape", "answer(False)", "No"),
                *scroll_bindings(*SCROLLS)]
    AUTO_FOCUS = "#no"

    def __init__(self, question: str, *, yes: str = "Yes", no: str = "No", detail: RenderableType = "") -> None:
        super().__init__()
        self.question = question
        self.detail = detail
        self.yes_label = yes
        self.no_label = no

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-dialog", classes="dialog"):
            with VerticalScroll(id="confirm-body"):  # a long question (what /undo takes back) scrolls, ↑/↓/pgup/pgdn too
                yield Static(self.question, id="confirm-question")
                if self.detail:
                    yield Static(self.detail, id="confirm-detail")
            with Horizontal(classes="dialog-buttons"):
                yield Button(f"{self.yes_label} (y)", id="yes", variant="warning")
                yield Button(f"{self.no_label} (n)", id="no", variant="primary")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)

    def action_scroll_text(self, how: str) -> None:
        scroll(self.query_one("#confirm-body", VerticalScroll), how)
