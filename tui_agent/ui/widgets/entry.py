"""Entry: one conversation item as the transcript keeps it (the widgets of messages.py and streaming.py show it)."""

from __future__ import annotations

import time
from tui_agent.core.content import JsonObject
from dataclasses import dataclass, field
from typing import Literal

EntryKind = Literal["user", "assistant", "tool", "notice", "thinking"]


@dataclass
class Entry:
    """One conversation item; tool entries fill in their result when the call finishes."""

    kind: EntryKind
    text: str = ""
    level: str = "info"
    call_id: str = ""
    tool: str = ""
    arguments: JsonObject = field(default_factory=dict)
    result: str | None = None
    is_error: bool = False
    duration_ms: float | None = None
    authored: bool = False
    source: str | None = None
    continued: bool = False
    started: float = field(default_factory=time.monotonic)
    cancelled: bool = False
    awaiting_approval: bool = False
    """A running call asking the person: its timer starts once they answer."""
    undone: bool = False
    """A user entry whose turn /undo or /rewind took back."""
    live: str = ""
    """A running call's newest output lines (ui/live_output.py), shown until its result comes."""
