"""Unified-diff parsing and Rich rendering: unified and side-by-side views, syntax-coloured per file."""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Literal

from rich.console import Group, RenderableType
from rich.style import Style
from rich.table import Table
from rich.text import Span, Text

if TYPE_CHECKING:
    from rich.syntax import Syntax

LineKind = Literal["file", "hunk", "same", "add", "del", "meta"]
HUNK_RE = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")
ADD_BG = Style(bgcolor="#12361f")
DEL_BG = Style(bgcolor="#3d1518")
THEME = "monokai"


@dataclass(frozen=True)
class DiffLine:
    """One line of a unified diff with its old/new line numbers and the file it belongs to."""

    kind: LineKind
    text: str
    old_no: int | None = None
    new_no: int | None = None
    path: str = ""


@dataclass(frozen=True)
class SideBySideRow:
    """A row of the side-by-side view: the old line on the left, the new one on the right."""

    kind: LineKind
    left: DiffLine | None
    right: DiffLine | None


def parse_unified(diff_text: str) -> list[DiffLine]:
    """Lines of a (possibly multi-file) unified diff, with line numbers tracked through hunks."""
    lines: list[DiffLine] = []
    old_no = new_no = 0
    path = ""
    for raw in diff_text.splitlines():
        if raw.startswith("+++ "):
            path = raw[4:].split("\t")[0].strip().removeprefix("b/")
            lines.append(DiffLine("file", raw, path=path))
        elif raw.startswith("--- ") or raw.startswith("diff --git") or raw.startswith("index "):
            if raw.startswith("--- ") and path == "":
                path = raw[4:].split("\t")[0].strip().removeprefix("a/")
            lines.append(DiffLine("file" if raw.startswith(("diff --git", "--- ")) else "meta", raw, path=path))
        elif match := HUNK_RE.match(raw):
            old_no, new_no = int(match.group(1)), int(match.group(2))
            lines.append(DiffLine("hunk", raw, path=path))
        elif raw.startswith("+"):
            lines.append(DiffLine("add", raw[1:], new_no=new_no, path=path))
            new_no += 1
        elif raw.startswith("-"):
            lines.append(DiffLine("del", raw[1:], old_no=old_no, path=path))
            old_no += 1
        elif raw.startswith(" "):
            lines.append(DiffLine("same", raw[1:], old_no=old_no, new_no=new_no, path=path))
            old_no += 1
            new_no += 1
        else:
            lines.append(DiffLine("meta", raw, path=path))
    return lines


def side_by_side(lines: list[DiffLine]) -> list[SideBySideRow]:
    """Pair deletions with the additions that follow them; context lines appear on both sides."""
    rows: list[SideBySideRow] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.kind in ("del", "add"):
            deleted: list[DiffLine] = []
            added: list[DiffLine] = []
            while index < len(lines) and lines[index].kind == "del":
                deleted.append(lines[index])
                index += 1
            while index < len(lines) and lines[index].kind == "add":
                added.append(lines[index])
                index += 1
            for position in range(max(len(deleted), len(added))):
                left = deleted[position] if position < len(deleted) else None
                right = added[position] if position < len(added) else None
                rows.append(SideBySideRow("del" if right is None else "add" if left is None else "add", left, right))
            continue
        if line.kind == "same":
            rows.append(SideBySideRow("same", line, line))
        else:
            rows.append(SideBySideRow(line.kind, line, None))
        index += 1
    return rows


@lru_cache(maxsize=64)
def lexer_name_for(path: str) -> str:
    """The pygments lexer alias for a path ("text" when unknown)."""
    if not path or path == "/dev/null":
        return "text"
    from pygments.lexers import get_lexer_for_filename  # pygments loads on the first highlight, not at startup
    from pygments.util import ClassNotFound

    try:
        return get_lexer_for_filename(path).aliases[0]
    except (ClassNotFound, IndexError):
        return "text"


_LEXER_BUILD = threading.Lock()
"""Pygments compiles a lexer class's rules when its first instance is made, without a lock of its own; the warm-up
thread and the event loop may build the same lexer at once."""


@lru_cache(maxsize=8)
def highlighter(lexer: str) -> Syntax:
    """A Syntax for `lexer` holding one lexer instance built under a lock (safe to share across threads after)."""
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound
    from rich.syntax import Syntax

    try:
        with _LEXER_BUILD:
            built = get_lexer_by_name(lexer, stripnl=False, ensurenl=True, tabsize=4)  # as Rich would build it
    except ClassNotFound:
        return Syntax("", lexer, theme=THEME, background_color="default")  # Rich shows it uncoloured
    return Syntax("", built, theme=THEME, background_color="default")


WARM_LEXERS = ("python", "json", "bash", "toml", "diff")


def warm_up_highlighting() -> None:
    """Build each common Pygments lexer once (its first use compiles its rules: 40-50 ms for Python), so the first
    code block shown while scrolling does not pay for it. Meant for a worker thread."""
    for lexer in WARM_LEXERS:
        highlighter(lexer).highlight("x = 1")


def highlight(text: str, path: str) -> Text:
    """One source line, syntax-coloured for the file it belongs to."""
    lexer = lexer_name_for(path)
    if lexer == "text":
        return Text(text)
    rendered = highlighter(lexer).highlight(text)
    rendered.rstrip()
    return _without_background(rendered)


def _foreground(style: Style | str) -> Style:
    style = Style.parse(style) if isinstance(style, str) else style
    return Style(color=style.color, bold=style.bold, italic=style.italic, underline=style.underline)


def _without_background(text: Text) -> Text:
    """The theme's background would paint boxes behind code; keep only foreground styles."""
    plain = Text(text.plain, style=_foreground(text.style) if text.style else "")
    for span in text.spans:
        plain.spans.append(Span(span.start, span.end, _foreground(span.style)))
    return plain


def highlighted_source(code: str, lexer: str = "python", *, line_numbers: bool = True) -> RenderableType:
    """Source code coloured for `lexer` on the pane's own background (no theme box), with line numbers."""
    syntax = highlighter(lexer)
    lines = [_without_background(syntax.highlight(line)) if lexer != "text" else Text(line) for line in code.splitlines() or [""]]
    for line in lines:
        line.rstrip()
    if not line_numbers:
        return Text("\n").join(lines)
    table = Table.grid(padding=(0, 1))
    table.add_column(justify="right", no_wrap=True, style="dim")
    table.add_column(ratio=1)
    for number, line in enumerate(lines, start=1):
        table.add_row(str(number), line)
    return table


def _number(value: int | None) -> Text:
    return Text("" if value is None else str(value), style="dim")


def render_unified(diff_text: str) -> RenderableType:
    """The diff as coloured lines: `+` on green, `-` on red, code highlighted per file type."""
    lines = parse_unified(diff_text)
    if not lines:
        return Text("no changes", style="dim italic")
    table = Table.grid(padding=(0, 1), expand=True)
    table.add_column(justify="right", width=4, no_wrap=True)
    table.add_column(justify="right", width=4, no_wrap=True)
    table.add_column(width=1, no_wrap=True)
    table.add_column(ratio=1)
    for line in lines:
        if line.kind == "file":
            table.add_row("", "", "", Text(line.text, style="bold #e5c07b"))
        elif line.kind == "hunk":
            table.add_row("", "", "", Text(line.text, style="#61afef"))
        elif line.kind == "meta":
            table.add_row("", "", "", Text(line.text, style="dim"))
        else:
            code = highlight(line.text, line.path)
            sign, style = {"add": ("+", ADD_BG), "del": ("-", DEL_BG), "same": (" ", Style())}[line.kind]
            if line.kind != "same":
                code.stylize(style)
            table.add_row(_number(line.old_no), _number(line.new_no), Text(sign, style=style), code, style=style)
    return table


def render_side_by_side(diff_text: str) -> RenderableType:
    """The diff as two columns, old on the left and new on the right, aligned by hunk; file headers span both."""
    lines = parse_unified(diff_text)
    if not lines:
        return Text("no changes", style="dim italic")
    parts: list[RenderableType] = []
    table: Table | None = None
    for row in side_by_side(lines):
        if row.kind in ("file", "meta"):
            assert row.left is not None
            parts.append(Text(row.left.text, style={"file": "bold #e5c07b", "meta": "dim"}[row.kind]))
            table = None
            continue
        if table is None:
            table = _side_by_side_table()
            parts.append(table)
        if row.kind == "hunk":
            assert row.left is not None
            table.add_row("", Text(row.left.text, style="#61afef"), "", "")
            continue
        left = _side_cell(row.left, DEL_BG if row.left is not None and row.left.kind == "del" else None)
        right = _side_cell(row.right, ADD_BG if row.right is not None and row.right.kind == "add" else None)
        table.add_row(_number(row.left.old_no if row.left else None), left, _number(row.right.new_no if row.right else None), right)
    return Group(*parts)


def _side_by_side_table() -> Table:
    table = Table.grid(padding=(0, 1), expand=True)
    table.add_column(justify="right", width=4, no_wrap=True)
    table.add_column(ratio=1)
    table.add_column(justify="right", width=4, no_wrap=True)
    table.add_column(ratio=1)
    return table


def _side_cell(line: DiffLine | None, background: Style | None) -> Text:
    if line is None:
        return Text("")
    code = highlight(line.text, line.path)
    if background is not None:
        code.stylize(background)
    return code


def diff_stats(diff_text: str) -> tuple[int, int]:
    """(added, deleted) line counts."""
    lines = parse_unified(diff_text)
    return sum(1 for line in lines if line.kind == "add"), sum(1 for line in lines if line.kind == "del")
