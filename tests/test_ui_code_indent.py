"""A finished reply's code block keeps its indentation in a narrow pane: a long line wraps under its own indent,
never back to column 0 (as Rich's code block did), and no character is lost."""

from __future__ import annotations

from rich.console import Console

from tui_agent.ui.widgets.rendered import RenderedMarkdown

CODE = ("def f():\n    if True:\n        return call_something_with_a_very_long_name(argument_one, argument_two, "
        "argument_three)\n    x = 1")
REPLY = f"Look:\n\n```python\n{CODE}\n```\n"


def rows_at(width: int) -> list[str]:
    console = Console(width=width, color_system=None, record=True)
    console.print(RenderedMarkdown(REPLY))
    return console.export_text().splitlines()


def test_a_long_code_line_wraps_under_its_indent() -> None:
    rows = rows_at(50)
    start = next(i for i, row in enumerate(rows) if row.strip() == "def f():")
    code_rows = [row for row in rows[start:] if row.strip()]
    long_rows = code_rows[2:-1]  # the return line and its continuations
    assert long_rows[0].startswith(" " * 9 + "return ") and len(long_rows) > 1
    assert all(row.startswith(" " * 11) and not row[11].isspace() for row in long_rows[1:])  # under its indent + 2
    joined = "".join(row.strip() for row in long_rows)  # nothing lost (the row breaks may fall on spaces)
    assert joined.replace(" ", "") == CODE.splitlines()[2].replace(" ", "")
    assert code_rows[-1] == " " * 5 + "x = 1" + code_rows[-1][10:]


def test_a_code_block_that_fits_is_unchanged() -> None:
    rows = rows_at(120)
    assert any(row.startswith(" " * 9 + "return call_something_with_a_very_long_name(argument_one") for row in rows)
