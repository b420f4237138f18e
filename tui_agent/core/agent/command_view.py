"""A command as an approval must show it: every line counted, runs of whitespace and control characters made
visible, and nothing cut without saying what was cut (issue 23: a tail hidden behind padding)."""

from __future__ import annotations

import unicodedata

SPACE_RUN = 4
"""Runs of this many spaces (or more) are shown as one marker saying how many."""
EMPTY_RUN = 2
"""Runs of this many empty (or whitespace-only) lines (or more) are shown as one marker line."""
NEWLINE = "⏎"


def _escape(char: str) -> str:
    code = ord(char)
    if char == "\t":
        return "⟨tab⟩"
    if code < 0x100:
        return f"⟨\\x{code:02x}⟩"
    return f"⟨U+{code:04X}⟩"


def is_hidden_char(char: str) -> bool:
    """Control and format characters (escape sequences, bidi overrides, zero-width) and unusual spaces."""
    if char in (" ", "\n"):
        return False
    return unicodedata.category(char) in ("Cc", "Cf", "Zs", "Zl", "Zp", "Co", "Cn")


def visible_line(line: str) -> str:
    """One line with control characters escaped, runs of spaces counted, and trailing spaces marked."""
    out: list[str] = []
    index = 0
    while index < len(line):
        char = line[index]
        if char == " ":
            end = index
            while end < len(line) and line[end] == " ":
                end += 1
            run = end - index
            trailing = end == len(line)
            if run >= SPACE_RUN or (trailing and run > 0):
                out.append(f"⟨{run} space{'s' if run != 1 else ''}{' at the end' if trailing else ''}⟩")
            else:
                out.append(" " * run)
            index = end
            continue
        out.append(_escape(char) if is_hidden_char(char) else char)
        index += 1
    return "".join(out)


def visible_lines(text: str) -> list[tuple[str, str]]:
    """(line numbers, visible text) rows: runs of empty lines become one row saying how many there are."""
    lines = text.split("\n")
    rows: list[tuple[str, str]] = []
    index = 0
    while index < len(lines):
        end = index
        while end < len(lines) and not lines[end].strip(" \t"):
            end += 1
        if end - index >= EMPTY_RUN:
            rows.append((f"{index + 1}-{end}", f"⟨{end - index} empty lines⟩"))
            index = end
            continue
        rows.append((str(index + 1), visible_line(lines[index])))
        index += 1
    return rows


def shape(text: str) -> str:
    """"1 line, 12 characters" / "62 lines, 475 characters"."""
    lines = text.count("\n") + 1
    return f"{lines} line{'s' if lines != 1 else ''}, {len(text)} character{'s' if len(text) != 1 else ''}"


def one_line(text: str, limit: int = 200) -> str:
    """The whole command on one line (lines joined by ⏎, whitespace and controls visible); when longer than `limit`,
    cut with a note saying how much is not shown."""
    joined = f" {NEWLINE} ".join(row for _numbers, row in visible_lines(text))
    if len(joined) <= limit:
        return joined
    return joined[:limit] + f"… [{len(joined) - limit} more characters of the shown form not shown here]"


def needs_plain_view(text: str) -> bool:
    """Whether highlighting would hide something: padding, control characters or runs of empty lines."""
    rows, lines = visible_lines(text), text.split("\n")
    return len(rows) != len(lines) or any(row != line for (_numbers, row), line in zip(rows, lines, strict=True))
