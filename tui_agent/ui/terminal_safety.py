"""Untrusted text never drives the terminal: control characters in what the app draws show as symbols, never raw."""

from __future__ import annotations

import rich.control
import textual.content

CONTROL_PICTURES: dict[int, str] = {
    **{code: chr(0x2400 + code) for code in range(0x20) if code not in (0x09, 0x0A)},  # ␀ … ␛ … ␟
    0x7F: "\u2421",  # ␡
    **{code: "\ufffd" for code in range(0x80, 0xA0)},  # C1 controls (CSI, OSC, … as one code point)
}
"""One visible character for each control character other than tab and newline (one for one: offsets hold)."""

_LIBRARY_TABLES = (rich.control._CONTROL_STRIP_TRANSLATE, textual.content._CONTROL_STRIP_TRANSLATE)


def visible_controls(text: str) -> str:
    """`text` with every control character but tab and newline replaced by its visible symbol (ESC shows as ␛)."""
    return text.translate(CONTROL_PICTURES)


def draw_control_characters_visibly() -> None:
    """Make Rich and Textual draw control characters as symbols in every text they render.

    Both strip only BEL, BS, VT, FF and CR from the text they draw; anything else reaches the terminal as is,
    so a tool's output, a model reply or a file name holding `ESC ] 0 ; … BEL` or `ESC [ 1 A` would retitle
    the window, move the cursor and leave stale lines on screen. Their tables keep deleting those five; every
    other control character gets its symbol. Idempotent.
    """
    for table in _LIBRARY_TABLES:
        for code, picture in CONTROL_PICTURES.items():
            table.setdefault(code, picture)  # type: ignore[arg-type]
