"""Paging a large session stays cheap: message widgets are reused as the window slides, long-lived objects are frozen."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
from textual.widget import Widget

from tests.test_ui_layout import write_session
from tests.ui_support import SIZE, make_app, ready, wait_until
from tui_agent.ui.widgets.entry_window import MAX_MOUNTED


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
                if hasattr(widget, "entry"):  # message widgets (not the edge markers, the welcome line, the new-below marker)
                    seen[id(widget)] = widget
        assert conversation.mounted_count <= MAX_MOUNTED
        assert len(seen) <= MAX_MOUNTED + 15, f"{len(seen)} message widgets built to page over 100 entries"
        shown = [widget.entry.text for widget in conversation.children if hasattr(widget, "entry")]
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


def _cyclic_garbage_after(make_garbage, is_ours) -> int:  # type: ignore[no-untyped-def]
    """How many objects `is_ours` picks only the cycle collector could free after `make_garbage()` ran (reference
    counting did the rest). Only what `make_garbage` made counts: a thread an earlier test left running (a lexer
    warming, an app's renderer) makes garbage of the same kinds meanwhile."""
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)  # what the collection finds is kept in gc.garbage, to be told apart
    try:
        make_garbage()
        gc.collect()
        return sum(1 for found in gc.garbage if is_ours(found))
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()


def test_strips_that_answer_with_themselves_leave_no_cyclic_garbage() -> None:
    from rich.segment import Segment
    from textual.strip import Strip

    from tui_agent.ui import lean_strips

    def divide_and_crop_to_themselves() -> None:
        for number in range(200):
            strip = Strip([Segment(f"line {number}")])
            strip.divide([strip.cell_length])
            strip.crop_extend(0, strip.cell_length, None)
            strip.divide([2, strip.cell_length])  # a real division is still cached
            assert strip.divide([2, strip.cell_length]) is strip.divide([2, strip.cell_length])

    def made_here(found: object) -> bool:
        return isinstance(found, Strip) and found.text.startswith("line ")

    lean_strips.install()
    assert _cyclic_garbage_after(divide_and_crop_to_themselves, made_here) == 0


def test_a_full_collection_runs_between_frames_only_when_one_is_due() -> None:
    from tui_agent.ui.heap import FULL_PASS_EVERY, collect_between_frames

    passes: list[int] = []

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            passes.append(info["generation"])

    gc.collect()
    gc.callbacks.append(count)
    try:
        collect_between_frames()
        assert 2 not in passes  # just collected: nothing is due
        while gc.get_count()[2] < FULL_PASS_EVERY:
            gc.collect(1)  # what the collector's own young passes do, over time
        collect_between_frames()
        assert passes[-1] == 2
    finally:
        gc.callbacks.remove(count)


def test_a_strip_makes_its_caches_only_when_it_uses_them() -> None:
    from rich.segment import Segment
    from textual.cache import FIFOCache
    from textual.strip import Strip

    from tui_agent.ui import lean_strips

    lean_strips.install()
    strip = Strip([Segment("hello world")])
    assert not [held for held in gc.get_referents(strip) if isinstance(held, FIFOCache)]
    assert strip.crop(0, 5).text == "hello" and strip.crop(0, 5) is strip.crop(0, 5)  # cached once made
    assert [type(held) for held in gc.get_referents(strip) if isinstance(held, FIFOCache)] == [FIFOCache]
    with pytest.raises(AttributeError):
        strip.no_such_attribute  # type: ignore[attr-defined]  # noqa: B018
