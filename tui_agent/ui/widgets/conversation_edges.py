"""The conversation's edges: markers for the entries outside its mounted window, the "new below" hint, and which
message just outside the window to render ahead."""

from __future__ import annotations

from collections.abc import Callable

from textual.widgets import Static

from tui_agent.ui.widgets.messages import Entry
from tui_agent.ui.widgets.rendered import prose_renderings

LOAD_STEP = 6
PRERENDER = 2 * LOAD_STEP
"""Messages on each side of the mounted window rendered ahead, one per loop turn while it idles (a slide then only mounts)."""


class EdgeMarker(Static):
    """Stands in for entries outside the mounted window; clicking it loads more in that direction."""

    def __init__(self, direction: str, load: Callable[[], object]) -> None:
        super().__init__("", classes=f"edge -{direction}")
        self.direction = direction
        self._load = load

    def on_click(self) -> None:
        self._load()


class NewBelow(Static):
    """Docked at the bottom of the conversation while the reader is scrolled up and something new arrived; a click follows,
    and so do shift+pgdn in the prompt box (where `end` moves the cursor) and `end` in the conversation itself."""

    def __init__(self, follow: Callable[[], object]) -> None:
        super().__init__("▼ new below — shift+pgdn, end or a click follows", id="new-below")
        self.display = False
        self._follow = follow

    def on_click(self) -> None:
        self._follow()


def next_unrendered(entries: list[Entry], first_mounted: int, last_mounted: int, width: int) -> Entry | None:
    """The nearest assistant message outside the window, above then below, not rendered at `width` yet."""
    above = entries[max(0, first_mounted - PRERENDER) : first_mounted][::-1]
    below = entries[last_mounted : last_mounted + PRERENDER]
    for entry in [*above, *below]:
        if entry.kind == "assistant" and not all(prose.rendered_at(width) for prose in prose_renderings(entry, entry.text)):
            return entry
    return None
