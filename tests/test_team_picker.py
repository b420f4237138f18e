"""The TUI's version picker lists every version across a merge with its author (issue 24), as `tools history` does."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot

from tests.gitrepo import git
from tests.team_repos import merged_with_a_teammate, new_repo_with_double
from tests.ui_support import SIZE, make_app, notifications, ready, row_names, tool_source, wait_until
from tui_agent.ui.app import TuiAgentApp
from tui_agent.ui.screens.pickers import ChoiceScreen


@pytest.fixture(autouse=True)
def no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


async def double_selected(pilot: Pilot[None], app: TuiAgentApp) -> None:
    """Once the app is open: the catalog pane shown with `double` selected (ready for its keys)."""
    await ready(pilot)
    await wait_until(pilot, lambda: "double" in row_names(app), message="double in the catalog pane")
    app.action_show_pane("catalog")
    assert app.catalog_pane.select("double")
    await pilot.pause()


async def test_the_version_picker_shows_both_sides_of_a_merge_with_their_authors(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    merged_with_a_teammate(repo)
    full = git(repo, "log", "--full-history", "--format=%H", "--", ".agent/tools/double.py").split()
    assert len(full) == 4 and len(git(repo, "log", "--format=%H", "--", ".agent/tools/double.py").split()) < 4
    app = make_app(repo)
    async with app.run_test(size=SIZE) as pilot:
        await double_selected(pilot, app)
        await pilot.press("h")
        await wait_until(pilot, lambda: isinstance(app.screen, ChoiceScreen), message=f"the history picker {notifications(app)}")
        assert isinstance(app.screen, ChoiceScreen)
        choices = app.screen.choices
        assert [choice.value for choice in choices] == full
        assert any("Tea Mate  teammate's double" in choice.label for choice in choices)
        assert any("Dev  my double" in choice.label for choice in choices)


async def test_revert_in_a_shallow_clone_says_the_clone_is_shallow(tmp_path: Path) -> None:
    origin = tmp_path / "origin"
    tool = new_repo_with_double(origin)
    tool.write_text(tool_source("double", "return x + x"))
    git(origin, "commit", "-q", "-am", "double, second version")
    mine = tmp_path / "mine"
    git(tmp_path, "clone", "-q", "--depth=1", f"file://{origin}", str(mine))
    app = make_app(mine)
    async with app.run_test(size=SIZE) as pilot:
        await double_selected(pilot, app)
        await pilot.press("u")
        await wait_until(pilot, lambda: any("shallow clone" in note for note in notifications(app)),
                         message=f"the shallow clone named {notifications(app)}")
        assert any("git fetch --unshallow" in note for note in notifications(app))
        assert tool.read_text() == (mine / ".agent" / "tools" / "double.py").read_text()
