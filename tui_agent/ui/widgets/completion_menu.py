"""The completion menu under the prompt: `/` commands with descriptions and `@` files; the prompt drives it by keys."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from tui_agent.ui.completion import Candidate


class CompletionMenu(OptionList, can_focus=False):
    """Never focused: the prompt keeps the keyboard and moves the highlight (↑/↓), accepts (tab/enter) or closes (esc)."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, compact=True)
        self.candidates: list[Candidate] = []
        self.display = False

    def show(self, candidates: list[Candidate]) -> None:
        if self.is_open and list(candidates) == self.candidates:
            return  # the same choices: the highlighted one stays
        self.candidates = list(candidates)
        self.clear_options()
        width = max((len(candidate.label) for candidate in candidates), default=0)
        for candidate in candidates:
            line = Text(candidate.label.ljust(width), style="bold")
            if candidate.description:
                line.append("  " + candidate.description, style="dim")
            self.add_option(Option(line))
        self.display = bool(candidates)
        if candidates:
            self.highlighted = 0
            self.border_title = "tab: complete · enter: run / take · ↑↓ · esc"

    def close(self) -> None:
        self.candidates = []
        self.clear_options()
        self.display = False

    @property
    def is_open(self) -> bool:
        return bool(self.display and self.candidates)

    def move(self, step: int) -> None:
        if self.candidates:
            self.highlighted = ((self.highlighted or 0) + step) % len(self.candidates)

    def chosen(self) -> Candidate | None:
        index = self.highlighted
        return self.candidates[index] if self.candidates and index is not None and 0 <= index < len(self.candidates) else None
