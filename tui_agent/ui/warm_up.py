"""Importing what the first reply and the first diff render with (Markdown, pygments), in a thread after startup."""

from __future__ import annotations

import importlib

from tui_agent.ui.diffs import warm_up_highlighting


def warm_up_rendering() -> None:
    """Import the streaming widget, rich's Markdown and the highlighter (call it in a thread)."""
    importlib.import_module("tui_agent.ui.widgets.streaming")
    importlib.import_module("rich.markdown")
    warm_up_highlighting()
