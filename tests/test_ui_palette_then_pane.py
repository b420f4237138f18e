"""A pane key (F2-F4) typed right after Escape closed the command palette selects its pane: Escape closes the palette
the moment it arrives, so the pane key never meets the palette (where pane keys are refused)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.command import CommandPalette

from tests.scripted_model import ScriptedModel
from tests.ui_support import burst, make_app, ready, wait_until


@pytest.mark.parametrize(("first", "pane_key", "pane"), [("f3", "f2", "conversation"), ("f2", "f4", "diff")])
async def test_a_pane_key_right_after_escape_closed_the_palette_selects_its_pane(repo: Path, scripted: ScriptedModel, first: str,
                                                                                 pane_key: str, pane: str) -> None:
    app = make_app(repo, client=scripted)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await pilot.press(first)
        await pilot.press("ctrl+p")
        await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette), message="the palette")
        burst(app, "escape", pane_key)
        await wait_until(pilot, lambda: app.panes.active == pane and not isinstance(app.screen, CommandPalette),
                         message=f"the {pane} pane, the palette closed (now {app.panes.active})")
        await pilot.pause()
        assert app.panes.active == pane and len(app.screen_stack) == 1


async def test_escape_still_closes_the_palette(repo: Path, scripted: ScriptedModel) -> None:
    app = make_app(repo, client=scripted)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await pilot.press("ctrl+p")
        await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette), message="the palette")
        await pilot.press("escape")
        await wait_until(pilot, lambda: len(app.screen_stack) == 1, message="the palette closed")
        await pilot.press("escape")  # no palette: Esc goes on as before (nothing to stop, nothing breaks)
        await pilot.pause()
        assert len(app.screen_stack) == 1
