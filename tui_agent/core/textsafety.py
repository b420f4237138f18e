"""Control characters made visible: untrusted text (tool output, model replies, file names) never drives a terminal."""

from __future__ import annotations

from typing import TextIO

CONTROL_PICTURES: dict[int, str] = {
    **{code: chr(0x2400 + code) for code in range(0x20) if code not in (0x09, 0x0A)},  # ␀ … ␛ … ␟
    0x7F: "\u2421",  # ␡
    **{code: "\ufffd" for code in range(0x80, 0xA0)},  # C1 controls (CSI, OSC, … as one code point)
}
"""One visible character for each control character other than tab and newline (one for one: offsets hold)."""


def visible_controls(text: str) -> str:
    """`text` with every control character but tab and newline replaced by its visible symbol (ESC shows as ␛)."""
    return text.translate(CONTROL_PICTURES)


def for_terminal(stream: TextIO, text: str) -> str:
    """`text` as it may be written to `stream`: made visible when the stream is a terminal, unchanged for a pipe."""
    try:
        interactive = stream.isatty()
    except (AttributeError, ValueError):  # a closed or unusual stream
        interactive = False
    return visible_controls(text) if interactive else text


def _escape(code: int) -> str:
    return {0x09: "\\t", 0x0A: "\\n", 0x0D: "\\r"}.get(code, f"\\x{code:02x}")


ESCAPES: dict[int, str] = {code: _escape(code) for code in (*range(0x20), 0x7F, *range(0x80, 0xA0))}
"""Every control character as its Python escape (`\\x1b`, `\\n`): shown, never dropped, never acted on."""


def escaped(text: str) -> str:
    """Project-controlled text for one line of CLI or headless output: every control character (newline and tab
    included) written as its escape, so an ESC cannot move the cursor and a newline cannot start a fake line."""
    return text.translate(ESCAPES)


def escaped_lines(text: str) -> str:
    """Project-controlled text of many lines (a tool's source, a diff): each line `escaped`, newlines and tabs kept."""
    return "\n".join(line.translate(LINE_ESCAPES) for line in text.split("\n"))


LINE_ESCAPES = {code: escape for code, escape in ESCAPES.items() if code != 0x09}
"""`ESCAPES` but the tab, which moves the cursor only to the right on its own line."""



def printable(text: str) -> str:
    """`escaped`, with the bytes of a file name that are not UTF-8 (lone surrogates, as os.fsdecode gives them) written
    as `\\xff`: one line that encodes as UTF-8 (a session log, an API request) whatever name it carries."""
    try:
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate no byte decodes to
        raw = text.encode("utf-8", "backslashreplace")
    return escaped(raw.decode("utf-8", "backslashreplace"))
