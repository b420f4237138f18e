"""Paging a large session stays cheap: message widgets are reused as the window slides, long-lived objects are frozen."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
from textual.widget import Widget

from tests.test_ui_layout import write_session
from tests.ui_support import SIZE, make_app, ready, wait_until
from tui_agent.ui.widgets.conversation import MAX_MOUNTED, EdgeMarker


@pytest.fixture(autouse=True)
def no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


async def test_paging_reuses_message_widgets_and_keeps_the_reading_position(repo: Path) -> None:
    write_session(repo, 1000)
    app = make_app(repo, resume="big")
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        conversation = app.conversation
        await wait_until(pilot, lambda: len(conversation.entries) >= 2000, message="the session")
        assert gc.get_freeze_count() > 0  # the runtime and the loaded session are out of the collector's scans
        conversation.focus()
        seen: dict[int, Widget] = {}  # strong references: a dropped widget keeps its id, so new ones are counted
        start = conversation.first_mounted
        while conversation.first_mounted > start - 100:
            await pilot.press("pageup")
            for widget in conversation.children:
                if not isinstance(widget, EdgeMarker):
                    seen[id(widget)] = widget
        assert conversation.mounted_count <= MAX_MOUNTED
        assert len(seen) <= MAX_MOUNTED + 15, f"{len(seen)} message widgets built to page over 100 entries"
        shown = [widget.entry.text for widget in conversation.children if not isinstance(widget, EdgeMarker)]
        expected = [entry.text for entry in conversation.entries[conversation.first_mounted : conversation.last_mounted]]
        assert shown == expected  # rebound widgets show their entries, in order

        conversation.scroll_home(animate=False, immediate=True)
        await pilot.pause()
        top = conversation.entries[conversation.first_mounted]
        top_widget = conversation._widgets[id(top)]
        on_screen = top_widget.region.y
        conversation.load_earlier()
        await pilot.pause()
        await pilot.pause()
        assert top_widget.entry is top and top_widget.region.y == on_screen  # the message being read stays put
        assert conversation.scroll_y > 0  # the older messages are above it, one page-up away
    assert gc.get_freeze_count() == 0  # handed back to the collector when the app closes
