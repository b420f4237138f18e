"""A reply's Markdown cut into prose and its top-level fenced code blocks (shown as sideways-scrolling blocks)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

FENCE_MARKS = ("```", "~~~")


@dataclass(frozen=True)
class ReplyPart:
    """Prose (Markdown) or one fenced code block's code and its language."""

    kind: Literal["prose", "code"]
    text: str
    language: str = ""


def reply_parts(markdown: str) -> list[ReplyPart]:
    """The prose runs and top-level fences of `markdown`, in order; a fence nested in a list or a quote stays in its prose."""
    if not any(mark in markdown for mark in FENCE_MARKS):
        return [ReplyPart("prose", markdown)]
    from markdown_it import MarkdownIt  # loads with the first reply that has a fence

    lines = markdown.splitlines(keepends=True)
    parts: list[ReplyPart] = []
    prose_start = 0
    for token in MarkdownIt("commonmark").parse(markdown):
        if token.type != "fence" or token.level != 0 or token.map is None:
            continue
        start, end = token.map
        _add_prose(parts, lines[prose_start:start])
        parts.append(ReplyPart("code", token.content.removesuffix("\n"), token.info.split()[0] if token.info.strip() else ""))
        prose_start = end
    _add_prose(parts, lines[prose_start:])
    return parts or [ReplyPart("prose", "")]


@lru_cache(maxsize=256)
def parts_of(markdown: str) -> tuple[ReplyPart, ...]:
    """`reply_parts`, each text parsed once (a message's widget and its prerendering both ask)."""
    return tuple(reply_parts(markdown))


def _add_prose(parts: list[ReplyPart], lines: list[str]) -> None:
    text = "".join(lines).strip("\n")
    if text.strip():
        parts.append(ReplyPart("prose", text))
