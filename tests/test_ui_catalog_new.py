"""The catalog pane marks tools a pull added or changed as `new` (issue 22) until the person views or uses them,
and the held MCP servers of a restricted project show as rows (issue 22's trust screen lists them too)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.gitrepo import git, init_repo
from tests.ui_support import make_app, ready, tool_source, wait_until
from tui_agent.cli import main
from tui_agent.ui.screens.source import SourceScreen
from tui_agent.ui.widgets.catalog_pane import NEW_MARK


@pytest.fixture(autouse=True)
def no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def commit_tools(repo: Path, message: str, **tools: str) -> None:
    folder = repo / ".agent" / "tools"
    folder.mkdir(parents=True, exist_ok=True)
    for name, body in tools.items():
        (folder / f"{name}.py").write_text(tool_source(name, body))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message)


def name_cell(app, name: str) -> str:  # type: ignore[no-untyped-def]
    pane = app.catalog_pane
    index = next(number for number, row in enumerate(pane.shown) if row.name == name)
    return str(pane.table.get_row_at(index)[[key for key, _label, _size in pane.columns].index("name")])


@pytest.mark.usefixtures("untrusted_config")
async def test_tools_a_pull_added_or_changed_are_new_until_viewed(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "project")
    commit_tools(repo, "the team's tools", double="return 2 * x", triple="return 3 * x")
    assert main(["--project", str(repo), "trust"]) == 0  # trusted: the tools are recorded as seen
    commit_tools(repo, "a pull", triple="return x + x + x", square="return x * x")

    app = make_app(repo)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await wait_until(pilot, lambda: {row.name for row in app.catalog_pane.rows} == {"double", "triple", "square"},
                         timeout=20, message="the three tools")
        await pilot.pause(0.2)
        assert {name: name_cell(app, name).endswith(NEW_MARK) for name in ("double", "triple", "square")} == {
            "double": False, "triple": True, "square": True}
        assert "2 new" in str(app.query_one("#catalog-title").render())

        app.action_show_pane("catalog")
        assert app.catalog_pane.select("square")
        await pilot.pause()
        await pilot.press("v")
        await wait_until(pilot, lambda: isinstance(app.screen, SourceScreen), message="the source view")
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, SourceScreen))
        assert not name_cell(app, "square").endswith(NEW_MARK) and name_cell(app, "triple").endswith(NEW_MARK)
        assert "1 new" in str(app.query_one("#catalog-title").render())

    again = make_app(repo)  # the next session: seen at the last close, nothing is news
    async with again.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await wait_until(pilot, lambda: len(again.catalog_pane.rows) == 3, timeout=20, message="the tools")
        assert not again.catalog_pane.new_names
