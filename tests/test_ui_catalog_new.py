"""The catalog pane: tools a pull added or changed marked `new` (issue 22) until the person views or uses them; a
key that accepts a drifted tool's drift after asking (issue 24); a restricted project's held MCP servers as rows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.gitrepo import git, init_repo
from tests.ui_support import answer_confirm, make_app, ready, tool_source, wait_until
from tui_agent.cli import main
from tui_agent.core.runtime_state import Restricted, catalog_of
from tui_agent.ui.screens.confirm import ConfirmScreen
from tui_agent.ui.screens.source import SourceScreen
from tui_agent.ui.screens.trust import TrustScreen
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


async def test_a_key_accepts_a_drifted_tools_drift_after_asking(repo: Path) -> None:
    app = make_app(repo)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        source = tool_source("greeting", "return open('app.py').read() * x", extra="DEPENDS_ON = ['app.py']\n",
                             summary="Repeat app.py.")
        await catalog_of(app.runtime).save("greeting", source)
        await wait_until(pilot, lambda: [row.name for row in app.catalog_pane.rows] == ["greeting"], message="the tool")
        (repo / "app.py").write_text("print('hello, drifted')\n")
        git(repo, "commit", "-qam", "user changes app.py")
        app.action_show_pane("catalog")
        assert app.catalog_pane.select("greeting")
        await pilot.press("f")
        await wait_until(pilot, lambda: app.catalog_pane.rows[0].status.startswith("drifted"), timeout=20,
                         message="status drifted")
        head = git(repo, "rev-parse", "HEAD")

        await pilot.press("A")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), timeout=20, message="the question")
        question = str(app.screen.question)  # type: ignore[attr-defined]
        assert "Accept the drift of tool" in question and "app.py" in question and "drift-reviews.json" in question
        assert "+print('hello, drifted')" in app.diff_pane.diff_text
        await pilot.press("n")  # keeping it drifted changes nothing
        await wait_until(pilot, lambda: not isinstance(app.screen, ConfirmScreen))
        await pilot.pause(0.3)
        assert git(repo, "rev-parse", "HEAD") == head and app.catalog_pane.rows[0].status.startswith("drifted")

        app.catalog_pane.table.focus()
        await pilot.press("A")
        await answer_confirm(pilot)
        await wait_until(pilot, lambda: not app.catalog_pane.rows[0].status.startswith("drifted"), timeout=20,
                         message="the drift accepted")
        assert ".agent/drift-reviews.json" in git(repo, "show", "--name-only", "--format=", "HEAD")
        # the diff pane no longer shows a drift that is accepted
        assert app.diff_pane.diff_text == "" and "drifted" not in app.diff_pane.title
        assert "accepted" in app.diff_pane.title


@pytest.mark.usefixtures("untrusted_config")
async def test_a_restricted_project_lists_its_mcp_servers_as_held_rows(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "project")
    marker = tmp_path / "server-ran"
    (repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"ping": {
        "command": "sh", "args": ["-c", f"touch {marker}"]}}}))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a server")
    app = make_app(repo, sandbox_tier="rlimits")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TrustScreen), timeout=30, message="the trust screen")
        await pilot.press("r")  # continue restricted
        await wait_until(pilot, lambda: app.ready.is_set(), timeout=60, message="the project to open")
        assert isinstance(app.state, Restricted)
        await wait_until(pilot, lambda: any(row.name == "mcp__ping" for row in app.catalog_pane.rows), timeout=20,
                         message="the held server's row")
        row = next(row for row in app.catalog_pane.rows if row.name == "mcp__ping")
        assert row.kind == "mcp" and row.status == "untrusted" and "touch" in row.summary and ".mcp.json" in row.summary
        assert "not trusted" in row.error
        assert "1 mcp" in str(app.query_one("#catalog-title").render())
    assert not marker.exists()  # listed, never started


async def test_a_tool_another_program_changes_while_open_is_marked_new(repo: Path) -> None:
    app = make_app(repo)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await catalog_of(app.runtime).save("double", tool_source("double"))  # the agent's own: not news
        await wait_until(pilot, lambda: [row.name for row in app.catalog_pane.rows] == ["double"], message="double")
        await pilot.pause(0.3)
        assert not name_cell(app, "double").endswith(NEW_MARK)
        commit_tools(repo, "a pull while the TUI is open", double="return x + x", square="return x * x")
        await wait_until(pilot, lambda: {"double", "square"} <= set(app.catalog_pane.new_names), timeout=20,
                         message="the pulled tools marked new")
        await wait_until(pilot, lambda: len(app.catalog_pane.shown) == 2, message="both rows")
        assert name_cell(app, "double").endswith(NEW_MARK) and name_cell(app, "square").endswith(NEW_MARK)
