"""The text a key event types (printable characters and the ones `str.isprintable` refuses but people type), and a
one-line text box that keeps them."""

from __future__ import annotations

import unicodedata

from textual import events
from textual.widget import Widget
from textual.widgets import Input

NOT_TYPED = {"Cc", "Cs"}
"""Control characters (Enter, Tab, Escape, Ctrl+letters) and lone surrogates: keys, not text. Everything else is
text, including what Textual's `is_printable` leaves out: joiners and non-joiners (ZWJ, ZWNJ), direction marks,
no-break spaces, private-use icons."""


def typed_text(event: events.Key) -> str | None:
    """The character `event` types into a text box, or None for a key that types nothing."""
    character = event.character
    if not character:
        return None
    if event.is_printable:
        return character
    if len(character) == 1 and unicodedata.category(character) not in NOT_TYPED:
        return character
    return None


def types_while_reading(event: events.Key, focused: Widget | None, reading: Widget) -> bool:
    """`event` types text while `reading` (the conversation) or a widget in it has the focus: it starts a prompt."""
    return focused is not None and typed_text(event) is not None and (focused is reading or reading in focused.ancestors)


class TypedInput(Input):
    """A one-line text box that keeps every character typed (Input drops what `is_printable` refuses)."""

    async def _on_key(self, event: events.Key) -> None:
        typed = typed_text(event)
        if typed is not None and not event.is_printable:
            event.stop()
            event.prevent_default()
            selection = self.selection
            if selection.is_empty:
                self.insert_text_at_cursor(typed)
            else:
                self.replace(typed, *selection)
            return
        await super()._on_key(event)
