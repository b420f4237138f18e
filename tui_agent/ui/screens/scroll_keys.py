"""Keys that scroll a question's long text while its buttons or options keep the focus."""

from __future__ import annotations

from textual.binding import Binding
from textual.containers import VerticalScroll

SCROLLS = {"up": "scroll_up", "down": "scroll_down", "pageup": "scroll_page_up", "pagedown": "scroll_page_down",
           "home": "scroll_home", "end": "scroll_end"}


def scroll_bindings(*keys: str) -> list[Binding]:
    """Bindings of `keys` to the screen's `scroll_text` action (priority: a focused list or button does not take them)."""
    return [Binding(key, f"scroll_text('{SCROLLS[key]}')", show=False, priority=True) for key in keys]


def scroll(view: VerticalScroll, how: str) -> None:
    """Scroll `view` the way `how` (one of SCROLLS' values) says, at once."""
    moves = {"scroll_up": view.scroll_up, "scroll_down": view.scroll_down, "scroll_page_up": view.scroll_page_up,
             "scroll_page_down": view.scroll_page_down, "scroll_home": view.scroll_home, "scroll_end": view.scroll_end}
    moves[how](animate=False)
