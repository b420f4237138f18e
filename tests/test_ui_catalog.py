"""Pilot tests of every catalog action in the real app, on real git repositories, through the real catalog and sandbox."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.gitrepo import git, user_state
from tests.ui_support import SIZE, answer_confirm, make_app, notifications, ready, row_names, tool_source, wait_until
from tui_agent.ui.screens.argument_form import ArgumentFormScreen
from tui_agent.ui.screens.confirm import ConfirmScreen
from tui_agent.ui.screens.pickers import ChoiceScreen
from tui_agent.ui.screens.source import SourceScreen
from tui_agent.ui.widgets.messages import ToolCallBlock
from tui_agent.core.runtime_state import catalog_of


@pytest.fixture(autouse=True)
def no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def subjects(repo: Path) -> list[str]:
    return git(repo, "log", "--format=%s").splitlines()


def tool_file(repo: Path, name: str) -> Path:
    return repo / ".agent" / "tools" / f"{name}.py"


async def select_tool(pilot, app, name: str) -> None:  # type: ignore[no-untyped-def]
    await wait_until(pilot, lambda: name in row_names(app), message=f"{name} in the catalog pane")
    app.action_show_pane("catalog")
    assert app.catalog_pane.select(name)
    await pilot.pause()


async def test_revert_and_history_keys_make_commits_and_show_diffs(dirty_repo: Path) -> None:
    before = user_state(dirty_repo)
    app = make_app(dirty_repo)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await catalog_of(app.runtime).save("double", tool_source("double", "return x + x"))
        await catalog_of(app.runtime).save("double", tool_source("double", "return 2 * x"))
        await select_tool(pilot, app, "double")

        await pilot.press("u")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), message="the revert's question")
        assert "previous version" in str(app.screen.question) and "-    return x + x" in app.diff_pane.diff_text
        await pilot.press("enter")  # the focused answer keeps the tool: nothing happens on one key
        await pilot.pause(0.3)
        assert subjects(dirty_repo)[0].startswith("tuiagent: update tool double")
        await pilot.press("u")
        await answer_confirm(pilot)
        await wait_until(pilot, lambda: subjects(dirty_repo)[0].startswith("tuiagent: revert tool double"), message="the revert commit")
        assert "return x + x" in tool_file(dirty_repo, "double").read_text()
        await wait_until(pilot, lambda: "reverted" in app.diff_pane.title)
        assert "-    return 2 * x" in app.diff_pane.diff_text and "+    return x + x" in app.diff_pane.diff_text

        await pilot.press("h")
        await wait_until(pilot, lambda: isinstance(app.screen, ChoiceScreen), message=f"the history picker {notifications(app)} {app.focused}")
        history = git(dirty_repo, "log", "--format=%H", "--", ".agent/tools/double.py").split()
        assert len(history) == 3
        await pilot.press("down", "enter")  # the second newest: the "update" commit
        await wait_until(pilot, lambda: app.diff_pane.subject == "double" and history[1][:8] in app.diff_pane.title, message="the history diff")
        assert "-    return 2 * x" in app.diff_pane.diff_text
        await pilot.press("m")  # side by side
        assert app.diff_pane.mode == "side-by-side" or app.focused is not app.diff_pane
    assert user_state(dirty_repo) == before
    assert git(dirty_repo, "status", "--porcelain", "--", ".agent/tools") == ""


async def test_prune_asks_first_and_restore_brings_it_back(dirty_repo: Path) -> None:
    before = user_state(dirty_repo)
    app = make_app(dirty_repo)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await catalog_of(app.runtime).save("triple", tool_source("triple", "return 3 * x", summary="Triple a number."))
        await select_tool(pilot, app, "triple")
        head = git(dirty_repo, "rev-parse", "HEAD")

        await pilot.press("d")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), message="the prune confirmation")
        await pilot.press("n")
        await pilot.pause(0.2)
        assert git(dirty_repo, "rev-parse", "HEAD") == head and tool_file(dirty_repo, "triple").exists()

        await pilot.press("d")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await wait_until(pilot, lambda: subjects(dirty_repo)[0] == "tuiagent: prune tool triple", message="the prune commit")
        assert not tool_file(dirty_repo, "triple").exists()
        await wait_until(pilot, lambda: "triple" not in row_names(app), message="the row to go")

        app.prompt_area.focus()
        app.prompt_area.insert("/restore triple")
        await pilot.press("enter")
        await wait_until(pilot, lambda: subjects(dirty_repo)[0].startswith("tuiagent: restore tool triple"), message="the restore commit")
        await wait_until(pilot, lambda: "triple" in row_names(app), message="the row to come back")
    assert user_state(dirty_repo) == before


async def test_run_key_opens_a_form_from_the_schema_and_records_the_call(repo: Path) -> None:
    app = make_app(repo)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await catalog_of(app.runtime).save("double", tool_source("double"))
        await select_tool(pilot, app, "double")
        head = git(repo, "rev-parse", "HEAD")

        await pilot.press("r")
        await wait_until(pilot, lambda: isinstance(app.screen, ArgumentFormScreen), message="the argument form")
        form = app.screen
        assert isinstance(form, ArgumentFormScreen) and [field.name for field in form.fields] == ["x"]
        await pilot.press("t", "w", "o", "ctrl+s")
        assert "x: expected integer" in str(form.query_one("#form-error").render())
        form.query_one("#arg-x").value = "21"  # type: ignore[attr-defined]
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: any(isinstance(w, ToolCallBlock) and w.entry.result for w in app.conversation.children), message="the run's result")
        block = next(w for w in app.conversation.children if isinstance(w, ToolCallBlock))
        assert block.entry.result == "42" and not block.entry.is_error
        await wait_until(pilot, lambda: [row.calls for row in app.catalog_pane.rows if row.name == "double"] == [1], message="the call count")
        assert [row.status for row in app.catalog_pane.rows] == ["ok"]
        assert git(repo, "rev-parse", "HEAD") == head  # a run commits nothing


async def test_esc_stops_a_tool_run_from_the_catalog(repo: Path) -> None:
    """The block of a run from the catalog says "esc stops it" once it runs a second: Esc does, and the pane works on."""
    app = make_app(repo)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await catalog_of(app.runtime).save("slow", tool_source("slow", "import time\n            time.sleep(60)\n            return x"))
        await select_tool(pilot, app, "slow")
        await pilot.press("r")
        await wait_until(pilot, lambda: isinstance(app.screen, ArgumentFormScreen), message="the argument form")
        app.screen.query_one("#arg-x").value = "1"
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: any(entry.tool == "slow" for entry in app.conversation.tool_entries()), message="the run's block")
        [entry] = app.conversation.tool_entries()
        await pilot.pause(1.2)
        assert entry.result is None and app.busy
        await pilot.press("escape")
        await wait_until(pilot, lambda: entry.result is not None, timeout=10, message="the run stopped")
        assert entry.cancelled and entry.is_error and "you stopped the run" in entry.result and not app.busy
        assert entry.duration_ms is not None and entry.duration_ms < 30_000
        assert any("slow: stopped" in message for message in notifications(app))


async def test_view_and_drift_keys(repo: Path) -> None:
    app = make_app(repo)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        source = tool_source("greeting", "return open('app.py').read() * x", extra="DEPENDS_ON = ['app.py']\n", summary="Repeat app.py.")
        await catalog_of(app.runtime).save("greeting", source)
        await select_tool(pilot, app, "greeting")

        await pilot.press("v")
        await wait_until(pilot, lambda: isinstance(app.screen, SourceScreen), message="the source view")
        assert app.screen.source == source  # type: ignore[attr-defined]
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, SourceScreen))

        (repo / "app.py").write_text("print('hello, drifted')\n")
        git(repo, "commit", "-qam", "user changes app.py")
        head = git(repo, "rev-parse", "HEAD")
        await pilot.press("f")
        await wait_until(pilot, lambda: "drifted" in app.diff_pane.title, timeout=20, message="the drift diff")
        assert "app.py" in app.diff_pane.title
        assert "+print('hello, drifted')" in app.diff_pane.diff_text
        assert git(repo, "rev-parse", "HEAD") == head
        await wait_until(pilot, lambda: [row.status for row in app.catalog_pane.rows] == ["drifted"], message="status drifted")


async def test_pane_follows_changes_from_another_process_and_from_the_watcher(repo: Path) -> None:
    app = make_app(repo)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await catalog_of(app.runtime).save("double", tool_source("double"))
        await wait_until(pilot, lambda: row_names(app) == ["double"])

        # another terminal: `tuiagent tools run` records a call in state.db; `tuiagent tools prune` commits
        cli = [sys.executable, "-m", "tui_agent.cli", "--project", str(repo), "tools"]
        subprocess.run([*cli, "run", "double", "--arg", "x=2"], check=True, capture_output=True, timeout=60)
        await wait_until(pilot, lambda: [row.calls for row in app.catalog_pane.rows] == [1], timeout=2.0, message="the call count from the other process")
        subprocess.run([*cli, "prune", "double"], check=True, capture_output=True, timeout=60)
        await wait_until(pilot, lambda: row_names(app) == [], timeout=3, message="the prune from the other process")
        assert git(repo, "log", "-1", "--format=%s").strip() == "tuiagent: prune tool double"  # the CLI's commit, not the watcher's

        # an editor writes a new tool file: the watcher validates, commits and registers it
        (repo / ".agent" / "tools" / "halve.py").write_text(tool_source("halve", "return x // 2", summary="Halve a number."))
        await wait_until(pilot, lambda: row_names(app) == ["halve"], timeout=10, message="the watcher's new tool")
        assert not any("failed" in message for message in notifications(app))


async def test_a_git_checkout_in_another_terminal_reaches_the_open_app(repo: Path) -> None:
    app = make_app(repo)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await catalog_of(app.runtime).save("double", tool_source("double"))
        await wait_until(pilot, lambda: app.header.branch == "main", message="the branch in the header")
        git(repo, "checkout", "-q", "-b", "feature")
        await wait_until(pilot, lambda: app.header.branch == "feature", timeout=5, message="the new branch from the watcher")
        await catalog_of(app.runtime).save("triple", tool_source("triple", "return 3 * x", summary="Triple a number."))
        await wait_until(pilot, lambda: row_names(app) == ["double", "triple"])
        main_log = git(repo, "log", "--format=%s", "main")
        git(repo, "checkout", "-q", "main")  # git removes triple.py from the work tree
        await wait_until(pilot, lambda: app.header.branch == "main" and row_names(app) == ["double"], timeout=10,
                         message="the checkout's catalog in the pane")
        await pilot.pause(0.5)
        assert git(repo, "log", "--format=%s", "main") == main_log  # following a checkout commits nothing
        git(repo, "checkout", "-q", "feature")
        await wait_until(pilot, lambda: row_names(app) == ["double", "triple"], timeout=10, message="triple back with its branch")
        assert git(repo, "log", "--format=%s", "feature").splitlines()[0] == "tuiagent: add tool triple"


async def test_filter_and_sort_keys(repo: Path) -> None:
    app = make_app(repo)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await catalog_of(app.runtime).save("double", tool_source("double"))
        await catalog_of(app.runtime).save("triple", tool_source("triple", "return 3 * x", summary="Triple a number."))
        await catalog_of(app.runtime).call_tool("triple", {"x": 1})
        await wait_until(pilot, lambda: [row.calls for row in app.catalog_pane.rows if row.name == "triple"] == [1], message="the call count")
        app.action_show_pane("catalog")
        await pilot.press("slash", "t", "r", "i", "enter")
        assert row_names(app) == ["triple"] and app.catalog_pane.table.has_focus
        app.catalog_pane.query_one("#catalog-filter").value = ""  # type: ignore[attr-defined]
        await pilot.pause()
        assert row_names(app) == ["double", "triple"]
        await pilot.press("s")  # name -> status: problems first (broken, drifted, unused), ok last
        assert app.catalog_pane.sort_key == "status" and row_names(app) == ["double", "triple"]
        await pilot.press("s")  # calls, most first
        assert app.catalog_pane.sort_key == "calls" and row_names(app) == ["triple", "double"]
