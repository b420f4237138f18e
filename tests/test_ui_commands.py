"""One command registry: the slash dispatch, the palette, prompt completion and /help list the same commands."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_recipes_tui import notices, setup
from tests.ui_support import SIZE, make_app, ready, wait_until
from tui_agent.ui.command_registry import CommandRegistry
from tui_agent.ui.palette import palette_commands
from tui_agent.ui.slash import BUILTIN_COMMANDS


@pytest.fixture(autouse=True)
def no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


async def test_dispatch_palette_completion_and_help_list_the_same_commands(dirty_repo: Path) -> None:
    setup(dirty_repo)
    app = make_app(dirty_repo, watch_catalog=False)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await wait_until(pilot, lambda: "yell" in app.commands.descriptions(), message="the recipes' commands")
        registered = [command.name for command in app.commands.commands()]
        assert set(registered) == {*BUILTIN_COMMANDS, "yell", "ask"} and len(registered) == len(set(registered))
        assert all(app.commands.find(name) is not None for name in registered)  # each one dispatches

        in_palette = {command.title.removeprefix("/") for command in palette_commands(app, app.prompt_area, app.catalog_pane, app.diff_pane) if command.title.startswith("/")}
        completed = {candidate.label.removeprefix("/") for name in registered
                     for candidate in app.prompt_completion.candidates(f"/{name}") if candidate.label == f"/{name}"}
        app.prompt_area.load_text("/help")
        await pilot.press("enter")
        await wait_until(pilot, lambda: any(text.startswith("Commands:") for text in notices(app)), message="/help")
        help_text = next(text for text in notices(app) if text.startswith("Commands:"))
        listed = {line.split()[0].removeprefix("/") for line in help_text.splitlines()[1:] if line.startswith("  /") and not line.startswith("  //")}
        assert in_palette == completed == listed == set(registered)
        assert "(recipe)" in app.commands.descriptions()["yell"]


async def test_a_command_that_needs_the_model_says_why_instead_of_running(dirty_repo: Path) -> None:
    app = make_app(dirty_repo, watch_catalog=False)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        command = app.commands.find("cost")
        assert command is not None and command.available() == app.no_model_message()
        app.prompt_area.load_text("/cost")
        await pilot.press("enter")
        await wait_until(pilot, lambda: notices(app).count(app.no_model_message()) == 2, message="the reason, once more")


def test_a_command_name_is_registered_once_and_a_recipe_never_shadows_a_builtin() -> None:
    async def nothing(args: str) -> None:
        return None

    registry = CommandRegistry({"help": "show help", "tools": "list tools"})
    registry.add("help", nothing)
    with pytest.raises(ValueError):
        registry.add("help", nothing)
    with pytest.raises(KeyError):
        registry.add("undescribed", nothing)
    assert registry.missing() == ["tools"]
    from tui_agent.ui.command_registry import Command

    registry.add_source(lambda: [Command("help", "a recipe's help", nothing, source="recipe"), Command("yell", "shout", nothing, source="recipe")])
    assert [(command.name, command.label) for command in registry.commands()] == [("help", "show help"), ("yell", "shout (recipe)")]


async def test_while_the_project_opens_a_model_command_says_so_and_init_is_queued(dirty_repo: Path) -> None:
    import asyncio

    from tests.test_ui_startup import GatedOpener

    opener = GatedOpener()
    app = make_app(dirty_repo, runtime_opener=opener, watch_catalog=False)
    async with app.run_test(size=SIZE) as pilot:
        await asyncio.wait_for(opener.started.wait(), 10)
        command = app.commands.find("cost")
        assert command is not None and command.available() == "The project is still opening: try again in a moment."
        app.prompt_area.load_text("/init")
        await pilot.press("enter")
        await wait_until(pilot, lambda: len(app.turns.queue) == 1, message="/init's prompt queued")
        opener.gate.set()
        await wait_until(pilot, lambda: app.ready.is_set(), timeout=30, message="the project open")
