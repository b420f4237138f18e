"""Untrusted text never drives the terminal: control characters in what the app draws show as symbols, never raw."""

from __future__ import annotations

import rich.control
import textual.content

from tui_agent.core.textsafety import CONTROL_PICTURES

_LIBRARY_TABLES = (rich.control._CONTROL_STRIP_TRANSLATE, textual.content._CONTROL_STRIP_TRANSLATE)


def draw_control_characters_visibly() -> None:
    """Make Rich and Textual draw control characters as symbols in every text they render.

    Both strip only BEL, BS, VT, FF and CR from the text they draw; anything else reaches the terminal as is,
    so a tool's output, a model reply or a file name holding `ESC ] 0 ; … BEL` or `ESC [ 1 A` would retitle
    the window, move the cursor and leave stale lines on screen. Their tables keep deleting those five; every
    other control character gets its symbol. Idempotent.
    """
    for table in _LIBRARY_TABLES:
        for code, picture in CONTROL_PICTURES.items():
            table.setdefault(code, picture)  # type: ignore[call-overload]  # the libraries type their tables dict[int, None]; str.translate takes str values too
