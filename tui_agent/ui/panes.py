"""The three panes' layout: which one shows (narrow) or has focus (wide), the tab bar, F5's zoom, the side panes' width."""

from __future__ import annotations

from typing import Any

from textual.app import App
from textual.widget import Widget
from textual.widgets import Tabs

from tui_agent.ui.widgets.catalog_pane import CatalogPane
from tui_agent.ui.widgets.diff_pane import DiffPane

PANES = ("conversation", "catalog", "diff")
PANE_IDS = {"conversation": "#conversation-pane", "catalog": "#catalog-pane", "diff": "#diff-pane"}


class PaneLayout:
    """Shows a pane by name: its tab, its screen class (what the narrow layout shows) and the focus."""

    def __init__(self, app: App[Any]) -> None:
        self.app = app  # Textual's App: this part touches only the panes' widgets and the screen
        self.active = "conversation"

    def prepare(self) -> None:
        """At mount: the panes' titles, and F5 may maximize each (the screen is born showing the conversation)."""
        for name, pane_id in PANE_IDS.items():
            pane = self.app.query_one(pane_id)
            pane.border_title = name.capitalize()
            pane.ALLOW_MAXIMIZE = True  # type: ignore[misc]  # F5 zooms a whole pane

    def focus_target(self, pane: str) -> Widget:
        if pane == "conversation":
            return self.app.query_one("#prompt")
        if pane == "catalog":
            return self.app.query_one("#catalog-pane", CatalogPane).table
        return self.app.query_one("#diff-pane", DiffPane).scroll  # (mounted after the first frame: the pane keeps it)

    def show(self, pane: str) -> None:
        if pane not in PANES:
            return
        self.active = pane
        screen = self.app.screen
        for name in PANES:
            screen.set_class(name == pane, f"-show-{name}")
        tabs = self.app.query_one("#pane-tabs", Tabs)
        if tabs.active != f"tab-{pane}":
            tabs.active = f"tab-{pane}"
        # at once, not `target.focus()` (deferred): a key typed right after F3 must reach the pane it selected
        screen.set_focus(self.focus_target(pane))

    def next(self) -> None:
        self.show(PANES[(PANES.index(self.active) + 1) % len(PANES)])

    def tab_activated(self, event: Tabs.TabActivated) -> None:
        if event.tabs.active != event.tab.id:
            return  # stale: F-keys pressed faster than the tab bar's messages arrive already moved on
        pane = str(event.tab.id).removeprefix("tab-")
        if pane != self.active:
            self.show(pane)

    def zoom(self) -> None:
        """Maximize the pane that has focus (F5 again restores the layout)."""
        screen = self.app.screen
        if screen.maximized is not None:
            screen.minimize()
            return
        focused = self.app.focused
        for pane_id in PANE_IDS.values():
            pane = self.app.query_one(pane_id)
            if focused is not None and (focused is pane or pane in focused.ancestors):
                screen.maximize(pane, container=False)
                return

    @property
    def narrow(self) -> bool:
        return self.app.screen.has_class("-narrow")

    def reveal_diff(self) -> None:
        """In the narrow layout the diff pane is a tab: switch to it."""
        if self.narrow:
            self.show("diff")

    def size(self, side_share: int | None) -> None:
        """The side panes' share of the width in percent, the conversation the rest (None: the layout's own widths)."""
        if not self.app.screen_stack:
            return
        main = self.app.screen_stack[0]  # the panes' screen, under any modal
        main.query_one("#side").styles.width = f"{side_share}%" if side_share is not None else None
        main.query_one("#conversation-pane").styles.width = f"{100 - side_share}%" if side_share is not None else None
