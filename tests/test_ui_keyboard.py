"""Pilot tests of the keyboard as a newcomer uses it: pane keys typed fast, the filter, palette, completion, labels."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual import events

from tests.test_ui_support import make_app, notifications, ready, row_names, tool_source, wait_until
from tui_agent.ui.app import TuiAgentApp
from tui_agent.ui.screens.source import SourceScreen


@pytest.fixture(autouse=True)
def no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def burst(app: TuiAgentApp, *keys: str) -> None:
    """Keys arriving together, as from a fast typist or a terminal's buffer (the pilot's `press` waits after each)."""
    assert app._driver is not None
    for key in keys:
        event = events.Key(key, key if len(key) == 1 else None)
        event.set_sender(app)
        app._driver.send_message(event)


@pytest.mark.parametrize("size", [(200, 50), (80, 24)])
@pytest.mark.parametrize("keys", [("f3", "v"), ("f4", "f5", "f5", "f3", "v")])
async def test_a_key_right_after_pane_keys_reaches_the_selected_pane(repo: Path, size: tuple[int, int], keys: tuple[str, ...]) -> None:
    app = make_app(repo)
    async with app.run_test(size=size) as pilot:
        await ready(pilot)
        await app.runtime.catalog.save_tool("double", tool_source("double"))
        await wait_until(pilot, lambda: "double" in row_names(app))
        burst(app, *keys)
        await wait_until(pilot, lambda: isinstance(app.screen, SourceScreen), message=f"the source view ({notifications(app)}, focus {app.focused})")
        assert app.prompt_area.text == ""


async def test_pane_keys_stay_inside_a_modal(repo: Path) -> None:
    app = make_app(repo)
    async with app.run_test(size=(120, 30)) as pilot:
        await ready(pilot)
        await app.runtime.catalog.save_tool("double", tool_source("double"))
        await wait_until(pilot, lambda: "double" in row_names(app))
        await pilot.press("f3", "v")
        await wait_until(pilot, lambda: isinstance(app.screen, SourceScreen))
        await pilot.press("f2")
        assert isinstance(app.screen, SourceScreen) and app.active_pane == "catalog"
