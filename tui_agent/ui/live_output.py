"""A running call's live output as a tool block keeps and shows it: its last lines only, however much it prints."""

from __future__ import annotations

from rich.text import Text

LIVE_LINES = 8
"""How many of the newest output lines a running call shows (and keeps)."""
LIVE_CHARS = 2000
"""At most this much of them (a command printing one endless line cannot grow the block)."""


def live_tail(kept: str, chunk: str) -> str:
    """What is kept of a running call's output once `chunk` arrived: its last LIVE_LINES lines (and the line still
    being printed), at most LIVE_CHARS characters."""
    lines = (kept + chunk).split("\n")
    return "\n".join(lines[-LIVE_LINES - 1:])[-LIVE_CHARS:]


def live_text(kept: str) -> Text:
    """The kept output as shown: a progress bar redrawn with carriage returns shows its latest state."""
    lines = [line.rstrip("\r").rsplit("\r", 1)[-1] for line in kept.split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return Text("\n".join(lines[-LIVE_LINES:]), style="dim", no_wrap=True, overflow="ellipsis")
