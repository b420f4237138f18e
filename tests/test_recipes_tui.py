"""Recipes in the real TUI (Pilot): a `command` recipe typed as `/<name> args`, recipes in the catalog pane, and a
file_changed recipe firing while the app runs, its result shown as a system entry in the conversation."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.gitrepo import git, user_state
from tests.recipes_helpers import COUNT_LINES, SHOUT, recipe_text
from tests.ui_support import SIZE, make_app, ready, row_names, wait_until
from tui_agent.core.runtime_state import recipes_of


@pytest.fixture(autouse=True)
def no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def setup(repo: Path) -> None:
    (repo / ".agent" / "tools").mkdir(parents=True)
    (repo / ".agent" / "recipes").mkdir(parents=True)
    (repo / ".agent" / "tools" / "shout.py").write_text(SHOUT)
    (repo / ".agent" / "tools" / "count_lines.py").write_text(COUNT_LINES)
    (repo / ".agent" / "recipes" / "yell.toml").write_text(
        recipe_text('on = "command"', 'tool = "shout"\nargs = { text = "{args}" }', description="shout the words"))
    (repo / ".agent" / "recipes" / "lines.toml").write_text(
        recipe_text('on = "file_changed"\npaths = ["*.md"]\ndebounce_ms = 50', 'tool = "count_lines"\nargs = { path = "{path}" }',
                    description="count lines of changed docs"))
    (repo / ".agent" / "recipes" / "ask.toml").write_text(
        recipe_text('on = "command"', 'prompt = "explain {args}"', description="ask the agent"))
    (repo / ".agent" / "recipes" / "oops.toml").write_text('description = "broken"\n[trigger]\non = "command"\n')


def notices(app) -> list[str]:  # type: ignore[no-untyped-def]
    return [entry.text for entry in app.conversation.entries if entry.kind == "notice"]


async def test_slash_command_recipe_runs_and_shows_in_the_conversation(dirty_repo: Path) -> None:
    setup(dirty_repo)
    before = user_state(dirty_repo)
    app = make_app(dirty_repo, watch_catalog=False)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await wait_until(pilot, lambda: {"yell", "lines", "oops"} <= set(row_names(app)), message="recipes in the catalog pane")
        rows = {row.name: row for row in app.catalog_pane.rows if row.kind == "recipe"}
        assert rows["yell"].status == "ok" and rows["oops"].status == "broken"
        assert app.slash_commands.recipe_commands() == {"ask": "ask the agent", "yell": "shout the words"}

        app.prompt_area.focus()
        app.prompt_area.insert("/yell hello from the tui")
        await pilot.press("enter")
        await wait_until(pilot, lambda: any("HELLO FROM THE TUI" in text for text in notices(app)),
                         message=f"the recipe result in the conversation, got {notices(app)}")
        tool_entries = [entry for entry in app.conversation.entries if entry.kind == "tool" and entry.tool == "shout"]
        assert tool_entries and tool_entries[0].arguments == {"text": "hello from the tui"}
        assert recipes_of(app.runtime).get("yell").runs == 1

        app.prompt_area.insert("/ask the loop guard")  # a prompt recipe hands the agent a turn; without a model the app says so
        await pilot.press("enter")
        await wait_until(pilot, lambda: any("prompt handed to the agent: explain the loop guard" in text for text in notices(app)),
                         message=f"the prompt hand-off, got {notices(app)}")
        assert any("No model is configured" in text for text in notices(app))

        app.prompt_area.insert("/oops now")
        await pilot.press("enter")
        await wait_until(pilot, lambda: any("Unknown command /oops" in text for text in notices(app)), message="broken recipe refused")
    assert user_state(dirty_repo) == before
    assert all(path.startswith(".agent/") for path in git(dirty_repo, "show", "--name-only", "--format=", "HEAD").split())


async def test_file_changed_recipe_fires_while_the_app_runs(repo: Path) -> None:
    setup(repo)
    app = make_app(repo)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        engine = recipes_of(app.runtime)
        await wait_until(pilot, lambda: engine.watcher.ready.is_set(), message="the recipe watcher")
        (repo / "README.md").write_text("# demo\nline two\nline three\n")
        await wait_until(pilot, lambda: any("recipe lines (file_changed) ok: count_lines → 3" in text for text in notices(app)),
                         timeout=15, message=f"the file_changed recipe's result, got {notices(app)}")
        await engine.idle()
        await pilot.pause(0.2)  # let the app's refresh workers settle before it shuts down
