"""Choice modals: pick one item from a list (a tool version from history, a session to resume)."""

from __future__ import annotations

from dataclasses import dataclass

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option


@dataclass(frozen=True)
class Choice:
    """One pickable item: `value` is returned, `label` shown."""

    value: str
    label: str


class ChoiceScreen(ModalScreen[str | None]):
    """Dismisses with the chosen value, or None on Escape."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, title: str, choices: list[Choice], *, empty: str = "nothing to pick") -> None:
        super().__init__()
        self.title_text = title
        self.choices = choices
        self.empty = empty

    def compose(self) -> ComposeResult:
        with Vertical(id="choice-dialog", classes="dialog"):
            yield Static(f"[b]{self.title_text}[/b]", id="choice-title")
            if self.choices:
                yield OptionList(*(Option(choice.label, id=choice.value) for choice in self.choices), id="choices")
            else:
                yield Static(self.empty, classes="dim")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
