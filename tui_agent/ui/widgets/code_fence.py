"""Code blocks of a finished message that keep their indentation: a line longer than the pane wraps under its own
indent (plus two columns), never back to column 0, as Rich's own code block does."""

from __future__ import annotations

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.markdown import CodeBlock, Markdown
from rich.padding import Padding
from rich.syntax import Syntax
from rich.text import Text

HANG = 2
"""How much further than its line's own indent a wrapped continuation starts."""
MIN_CHUNK = 8
"""The fewest characters a continuation row carries (a deep indent in a narrow pane still makes progress)."""


def wrap_keeping_indent(line: Text, width: int) -> list[Text]:
    """`line` in rows of at most `width` cells; rows after the first start under its indent plus HANG."""
    if width <= 0 or cell_len(line.plain) <= width:
        return [line]
    indent = len(line.plain) - len(line.plain.lstrip(" "))
    lead = min(indent + HANG, max(0, width - MIN_CHUNK))
    rows: list[Text] = []
    rest, room = line, width
    while cell_len(rest.plain) > room:
        cut = _fit(rest.plain, room)
        head, rest = rest.divide([cut])
        rows.append(head if not rows else Text(" " * lead, style=line.style) + head)
        room = width - lead
    rows.append(rest if not rows else Text(" " * lead, style=line.style) + rest)
    return rows


def _fit(text: str, room: int) -> int:
    """How many characters of `text` fill at most `room` cells (one at least)."""
    used = 0
    for index, char in enumerate(text):
        used += cell_len(char)
        if used > room:
            return max(1, index)
    return len(text)


class IndentedCodeBlock(CodeBlock):
    """Rich's code block, highlighted the same way, wrapped by `wrap_keeping_indent`."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        code = str(self.text).rstrip()
        syntax = Syntax(code, self.lexer_name, theme=self.theme, word_wrap=False, padding=1)
        background = syntax.get_theme(self.theme).get_background_style()
        width = options.max_width - 2  # the padding on each side
        rows: list[Text] = []
        for line in syntax.highlight(code).split("\n", allow_blank=True):
            rows.extend(wrap_keeping_indent(line, width))
        body = Text("\n").join(rows)
        body.style = background
        yield Padding(body, 1, style=background, expand=True)


class IndentedMarkdown(Markdown):
    """Rich Markdown whose code blocks keep their indentation when wrapped."""

    elements = {**Markdown.elements, "fence": IndentedCodeBlock, "code_block": IndentedCodeBlock}
