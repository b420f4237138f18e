"""The prompt box's long pastes: each one token in the text (ui/pasted.py) that edits as one unit; ctrl+o expands it."""

from __future__ import annotations

from typing import Any

from textual import events
from textual.binding import Binding
from textual.widgets import TextArea
from textual.widgets.text_area import EditResult, Location

from tui_agent.ui.pasted import PasteStore, is_long, pasted_newlines


class PasteTokenArea(TextArea):
    """A TextArea where a long paste goes in as one token standing for its text: `full_text` is the text with every
    token replaced by what was pasted; backspace or delete take a token whole, the arrows step over it, typing goes
    around it, and ctrl+o turns it back into its text."""

    BINDINGS = [Binding("ctrl+o", "expand_paste", "Expand paste")]

    def __init__(self, text: str = "", **options: Any) -> None:
        """As TextArea's (`options` are its keyword arguments)."""
        super().__init__(text, **options)
        self.pastes = PasteStore()
        """The long pastes of this run, shown in the box as their tokens."""

    @property
    def full_text(self) -> str:
        """The text as it is sent: each paste token replaced by exactly the text pasted."""
        return self.pastes.expand(self.text)

    @property
    def selected_text(self) -> str:
        """The selection as ctrl+c copies it: a paste token in it as the text pasted."""
        return self.pastes.expand(super().selected_text)

    def load_text(self, text: str) -> None:
        """Replace the whole text; a long paste of this run that it holds shows as its token again."""
        super().load_text(self.pastes.refold(text))

    async def _on_paste(self, event: events.Paste) -> None:
        """A long paste goes in as one token (its text kept aside, sent in its place); a short one as typed (TextArea's
        own handler, which Textual runs after this one unless prevented)."""
        text = pasted_newlines(event.text)
        if self.read_only or not is_long(text):
            return
        event.stop()
        event.prevent_default()
        if result := self._replace_via_keyboard(self.pastes.fold(text), *self.selection):
            self.move_cursor(result.end_location)
            self.focus()

    def _token_around(self, location: Location, *, touching: bool = False) -> tuple[int, int] | None:
        """The (start, end) columns of the paste token `location` is inside (or at either edge of, when `touching`)."""
        row, column = location
        for start, end in self.pastes.spans(self.document.get_line(row)):
            if start < column < end or (touching and start <= column <= end):
                return start, end
        return None

    def _widened(self, start: Location, end: Location) -> tuple[Location, Location]:
        """An edit's range grown to whole tokens (a backspace at a token's end takes all of it); an insertion inside a
        token goes after it."""
        start, end = sorted((start, end))
        first, last = self._token_around(start), self._token_around(end)
        if start == end:
            return ((start[0], first[1]),) * 2 if first is not None else (start, end)
        return ((start[0], first[0]) if first is not None else start, (end[0], last[1]) if last is not None else end)

    def _delete_via_keyboard(self, start: Location, end: Location) -> EditResult | None:
        return super()._delete_via_keyboard(*self._widened(start, end))

    def _replace_via_keyboard(self, insert: str, start: Location, end: Location) -> EditResult | None:
        return super()._replace_via_keyboard(insert, *self._widened(start, end))

    def insert(self, text: str, location: Location | None = None, *, maintain_selection_offset: bool = True) -> EditResult:
        """Text put in at the cursor (a new line, typing that went on under a question) goes after a token it is inside."""
        token = self._token_around(self.cursor_location) if location is None else None
        if token is not None:
            self.move_cursor((self.cursor_location[0], token[1]))
        return super().insert(text, location, maintain_selection_offset=maintain_selection_offset)

    def action_cursor_left(self, select: bool = False) -> None:
        super().action_cursor_left(select)
        token = None if select else self._token_around(self.cursor_location)
        if token is not None:  # a token is one step
            self.move_cursor((self.cursor_location[0], token[0]))

    def action_cursor_right(self, select: bool = False) -> None:
        super().action_cursor_right(select)
        token = None if select else self._token_around(self.cursor_location)
        if token is not None:
            self.move_cursor((self.cursor_location[0], token[1]))

    def action_expand_paste(self) -> None:
        """Ctrl+O: the paste token at the cursor (else every one in the box) becomes its text, to edit."""
        row = self.cursor_location[0]
        token = self._token_around(self.cursor_location, touching=True)
        if token is not None:
            pasted = self.pastes.text_of(self.document.get_line(row)[token[0] : token[1]]) or ""
            result = self.replace(pasted, (row, token[0]), (row, token[1]))
            self.move_cursor(result.end_location)
        elif self.pastes.holds_tokens(self.text):
            text = self.full_text
            super().load_text(text)
            self.move_cursor(self.document.end)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Ctrl+O shows in the footer while the box holds a paste token."""
        if action == "expand_paste":
            return self.pastes.holds_tokens(self.text)
        return super().check_action(action, parameters)
