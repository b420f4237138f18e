"""Ctrl+R in the prompt box: earlier prompts, newest first, narrowed as one types; Enter puts the chosen one back."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from tui_agent.core.agent.command_view import one_line

LABEL_LIMIT = 150


def matching(entries: list[str], query: str) -> list[str]:
    """The distinct prompts (newest first) that hold every word of `query`, ignoring case."""
    words = query.lower().split()
    seen: set[str] = set()
    found: list[str] = []
    for entry in reversed(entries):
        if entry in seen or not all(word in entry.lower() for word in words):
            continue
        seen.add(entry)
        found.append(entry)
    return found


class HistorySearchScreen(ModalScreen[str | None]):
    """Dismisses with the chosen prompt's whole text, or None on Escape."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel", show=False),
        Binding("up", "move(-1)", show=False, priority=True),
        Binding("down", "move(1)", show=False, priority=True),
        Binding("ctrl+r", "move(1)", "Older", show=False, priority=True),
    ]

    def __init__(self, entries: list[str], query: str = "") -> None:
        super().__init__()
        self.entries = entries
        self.query_text = query
        self.shown: list[str] = []

    def compose(self) -> ComposeResult:
        with Vertical(id="history-dialog", classes="dialog"):
            yield Static("[b]Search earlier prompts[/b]  (enter puts it in the box · ↑/↓ or ctrl+r move · esc)",
                         id="history-title")
            yield Input(self.query_text, placeholder="type to search", id="history-query")
            yield OptionList(id="history-matches")

    def on_mount(self) -> None:
        self._fill(self.query_text)
        self.query_one("#history-query", Input).focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        self._fill(event.value)

    def _fill(self, query: str) -> None:
        self.shown = matching(self.entries, query)
        options = self.query_one("#history-matches", OptionList)
        options.clear_options()
        options.add_options([Option(one_line(entry, LABEL_LIMIT)) for entry in self.shown] or
                            [Option("(no earlier prompt matches)", disabled=True)])
        options.highlighted = 0 if self.shown else None

    def action_move(self, step: int) -> None:
        options = self.query_one("#history-matches", OptionList)
        if self.shown:
            options.highlighted = max(0, min(len(self.shown) - 1, (options.highlighted or 0) + step))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._choose(self.query_one("#history-matches", OptionList).highlighted)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self._choose(event.option_index)

    def _choose(self, index: int | None) -> None:
        self.dismiss(self.shown[index] if index is not None and 0 <= index < len(self.shown) else None)

    def action_cancel(self) -> None:
        self.dismiss(None)
