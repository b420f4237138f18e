"""The person's screen preferences across runs (theme, side pane width), in $XDG_CONFIG_HOME/tuiagent/ui.json."""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

from tui_agent.core.sharedfile import locked, replace_text

THEME_NAMES = ("dark", "light")
SIDE_SHARE_RANGE = (25, 70)


@dataclass
class Preferences:
    theme: str = "dark"
    side_share: int = 40


def preferences_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "tuiagent" / "ui.json"


def load_preferences(path: Path | None = None) -> Preferences:
    """The saved preferences; the defaults for a missing or unreadable file and for any value out of range."""
    preferences = Preferences()
    try:
        raw = json.loads((path or preferences_path()).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return preferences
    if not isinstance(raw, dict):
        return preferences
    if raw.get("theme") in THEME_NAMES:
        preferences.theme = raw["theme"]
    share = raw.get("side_share")
    if isinstance(share, int) and not isinstance(share, bool) and SIDE_SHARE_RANGE[0] <= share <= SIDE_SHARE_RANGE[1]:
        preferences.side_share = share
    return preferences


def save_preferences(preferences: Preferences, path: Path | None = None) -> None:
    """Write them (best effort: a read-only config folder only means they are not remembered)."""
    target = path or preferences_path()
    with contextlib.suppress(OSError):
        with locked(target):
            replace_text(target, json.dumps(asdict(preferences)))
