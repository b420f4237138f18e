"""Long pastes folded to one placeholder token in the prompt box, and the tokens turned back into the exact pasted text."""

from __future__ import annotations

import re

FOLD_FROM_CHARS = 800
"""A paste longer than this shows as one token (as Claude Code folds them)."""
FOLD_FROM_LINES = 9
"""A paste of this many lines or more shows as one token too (the prompt box shows eight)."""
TOKEN = re.compile(r"\[Pasted text #\d+ · [\d,]+ chars, [\d,]+ lines?\]")


def pasted_newlines(text: str) -> str:
    """A terminal's paste with its line breaks as the document keeps them (terminals send CR for each newline)."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def is_long(text: str) -> bool:
    return len(text) > FOLD_FROM_CHARS or text.count("\n") + 1 >= FOLD_FROM_LINES


class PasteStore:
    """The long pastes of this run, each under its token (`[Pasted text #1 · 6,000 chars, 120 lines]`); kept for the
    run, so a token in a draft, the history or a failed prompt brought back still stands for its text."""

    def __init__(self) -> None:
        self._texts: dict[str, str] = {}

    def fold(self, text: str) -> str:
        """Keep `text` and return the token that stands for it."""
        lines = text.count("\n") + 1
        token = f"[Pasted text #{len(self._texts) + 1} · {len(text):,} chars, {lines:,} line{'s' if lines != 1 else ''}]"
        self._texts[token] = text
        return token

    def text_of(self, token: str) -> str | None:
        return self._texts.get(token)

    def expand(self, text: str) -> str:
        """`text` with every token of this store replaced by its pasted text, exactly (a pasted text is not searched
        for tokens again)."""
        return TOKEN.sub(lambda match: self._texts.get(match.group(), match.group()), text)

    def refold(self, text: str) -> str:
        """`text` with each pasted text of this run that it holds whole shown as its token again (a failed prompt, a
        recalled one); longest first, so a paste inside another stays inside it."""
        for token, pasted in sorted(self._texts.items(), key=lambda item: -len(item[1])):
            text = text.replace(pasted, token)
        return text

    def spans(self, line: str) -> list[tuple[int, int]]:
        """Where this store's tokens are in one line of the box: (start, end) columns."""
        return [match.span() for match in TOKEN.finditer(line) if match.group() in self._texts]

    def holds_tokens(self, text: str) -> bool:
        return any(match.group() in self._texts for match in TOKEN.finditer(text))
