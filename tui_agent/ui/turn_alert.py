"""The end of a long turn, told to a person who looked away: the terminal bell, and a desktop notification (OSC 9 or
OSC 777) in the terminals known to show one."""

from __future__ import annotations

import os
from collections.abc import Mapping

from textual.app import App

OSC9_PROGRAMS = frozenset({"iTerm.app", "WezTerm", "ghostty", "WarpTerminal", "vscode"})
"""TERM_PROGRAM values of terminals that show `ESC ] 9 ; text BEL` as a notification."""


def notification_sequence(title: str, body: str, env: Mapping[str, str]) -> str:
    """The escape sequence this terminal shows as a desktop notification; "" where none is known (unknown OSCs are
    dropped by most terminals, but not all: nothing is sent on a guess)."""
    text = " ".join(f"{title}: {body}".split()).replace("\x07", "").replace("\x1b", "")
    term = env.get("TERM", "")
    if env.get("TERM_PROGRAM") in OSC9_PROGRAMS or "WT_SESSION" in env or "kitty" in term or "KITTY_WINDOW_ID" in env:
        return f"\x1b]9;{text}\x07"
    if term.startswith(("rxvt", "foot")) or "VTE_VERSION" in env:
        safe = [part.replace(";", ",") for part in (title, " ".join(body.split()))]
        return f"\x1b]777;notify;{safe[0]};{safe[1]}\x07"
    return ""


def alert_if_long(app: object, elapsed_s: float, threshold_s: int, outcome: str) -> bool:
    """Ring the bell (and notify) when the turn took at least `threshold_s` seconds (0: never); True when it did."""
    if threshold_s <= 0 or elapsed_s < threshold_s or not isinstance(app, App):
        return False
    app.bell()
    sequence = notification_sequence("tuiagent", f"{outcome} after {elapsed_s:.0f} s", os.environ)
    driver = app._driver
    if sequence and driver is not None and not app.is_headless:
        driver.write(sequence)
    return True
