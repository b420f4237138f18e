"""Pilot tests of the keyboard as a newcomer uses it: pane keys typed fast, the filter, palette, completion, labels."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual import events
from textual.screen import Screen

from tests.ui_support import burst, make_app, notifications, ready, row_names, tool_source, wait_until
from tui_agent.ui.palette import palette_commands
from tui_agent.ui.screens.source import SourceScreen
from tui_agent.core.runtime_state import catalog_of


@pytest.fixture(autouse=True)
def no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize("size", [(200, 50), (80, 24)])
@pytest.mark.parametrize("keys", [("f3", "v"), ("f4", "f5", "f5", "f3", "v")])
async def test_a_key_right_after_pane_keys_reaches_the_selected_pane(repo: Path, size: tuple[int, int], keys: tuple[str, ...]) -> None:
    app = make_app(repo)
    async with app.run_test(size=size) as pilot:
        await ready(pilot)
        await catalog_of(app.runtime).save("double", tool_source("double"))
        await wait_until(pilot, lambda: "double" in row_names(app))
        burst(app, *keys)
        await wait_until(pilot, lambda: isinstance(app.screen, SourceScreen), message=f"the source view ({notifications(app)}, focus {app.focused})")
        assert app.prompt_area.text == ""


async def test_pane_keys_stay_inside_a_modal(repo: Path) -> None:
    app = make_app(repo)
    async with app.run_test(size=(120, 30)) as pilot:
        await ready(pilot)
        await catalog_of(app.runtime).save("double", tool_source("double"))
        await wait_until(pilot, lambda: "double" in row_names(app))
        await pilot.press("f3", "v")
        await wait_until(pilot, lambda: isinstance(app.screen, SourceScreen))
        await pilot.press("f2")
        assert isinstance(app.screen, SourceScreen) and app.panes.active == "catalog"


async def test_escape_clears_and_leaves_the_filter_and_recipes_do_not_hide_tools(repo: Path) -> None:
    app = make_app(repo)
    async with app.run_test(size=(120, 30)) as pilot:
        await ready(pilot)
        await catalog_of(app.runtime).save("double", tool_source("double"))
        await wait_until(pilot, lambda: "double" in row_names(app))
        await pilot.press("f3", "slash", "z", "z")
        assert app.catalog_pane.filter_text == "zz" and row_names(app) == []
        await pilot.press("escape")
        assert app.catalog_pane.filter_text == "" and app.focused is app.catalog_pane.table and row_names(app) == ["double"]
        await pilot.press("slash")
        assert app.focused is app.catalog_pane.query_one("#catalog-filter")
        await pilot.press("escape", "v")
        await wait_until(pilot, lambda: isinstance(app.screen, SourceScreen), message="v acting on the table after esc")
        await pilot.press("escape", "f2")
        app.prompt_area.insert("/recipes")
        await pilot.press("enter")
        await wait_until(pilot, lambda: any(e.text.startswith("No recipes yet") for e in app.conversation.entries))
        await pilot.press("f3")
        assert row_names(app) == ["double"] and app.catalog_pane.filter_text == ""


async def test_the_palette_lists_catalog_actions_zoom_and_restore_without_eating_markup(repo: Path) -> None:
    app = make_app(repo)
    async with app.run_test(size=(120, 30)) as pilot:
        await ready(pilot)
        await catalog_of(app.runtime).save("double", tool_source("double"))
        await wait_until(pilot, lambda: "double" in row_names(app))
        await pilot.press("f3")
        commands = {command.title: command.help for command in palette_commands(app, app.prompt_area, app.catalog_pane, app.diff_pane)}
        for title in ("View double", "Run double", "Prune double", "Revert double", "History double", "Drift double",
                      "Catalog: show pruned tools", "/restore", "Zoom the pane"):
            assert title in commands, title
        assert "[ID]" in commands["/resume"]  # shown literally, not taken as markup
        await pilot.press("ctrl+p")
        await pilot.press(*"resume")
        await pilot.pause(0.5)
        assert "(/resume&#160;[ID])" in app.export_screenshot()  # the palette's line for /resume


async def test_pruned_tools_view_restores_with_one_key(repo: Path) -> None:
    app = make_app(repo)
    async with app.run_test(size=(120, 30)) as pilot:
        await ready(pilot)
        await catalog_of(app.runtime).save("double", tool_source("double"))
        await catalog_of(app.runtime).save("triple", tool_source("triple", "return 3 * x"))
        for x in (1, 2):
            assert (await catalog_of(app.runtime).call_tool("triple", {"x": x})).ok
        await catalog_of(app.runtime).prune("triple")
        await wait_until(pilot, lambda: row_names(app) == ["double"])
        await pilot.press("f3", "p")
        await wait_until(pilot, lambda: row_names(app) == ["triple"], message="the pruned view")
        pruned = app.catalog_pane.shown[0]
        assert pruned.status == "pruned" and pruned.calls == 2 and pruned.last_used is not None  # what it had been used for
        await pilot.press("enter")
        await wait_until(pilot, lambda: (repo / ".agent" / "tools" / "triple.py").exists(), message="the restore")
        # back in the catalog, on the tool just restored
        await wait_until(pilot, lambda: row_names(app) == ["double", "triple"], message="both tools back in the catalog")
        assert not app.catalog_pane.show_pruned
        await wait_until(pilot, lambda: getattr(app.catalog_pane.selected(), "name", "") == "triple", message="the restored row selected")


async def test_page_up_in_the_prompt_scrolls_the_conversation(repo: Path) -> None:
    app = make_app(repo)
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        for number in range(40):
            await app.add_notice(f"line {number}")
        await pilot.pause(0.2)
        conversation = app.conversation
        await wait_until(pilot, lambda: conversation.scroll_y == conversation.max_scroll_y and conversation.max_scroll_y > 0, message="at the end")
        bottom = conversation.scroll_y
        assert app.focused is app.prompt_area
        await pilot.press("pageup")
        await wait_until(pilot, lambda: conversation.scroll_y < bottom, message="scrolled up")
        assert app.focused is app.prompt_area and app.prompt_area.text == ""
        await pilot.press("pagedown", "pagedown")
        await wait_until(pilot, lambda: conversation.scroll_y == bottom, message="back at the end")
        assert "shift+tab" in app.prompt_area.placeholder and "pgup" in app.prompt_area.placeholder


async def test_shift_u_reverts_to_a_version_picked_from_the_history(repo: Path) -> None:
    from tests.gitrepo import git
    from tui_agent.ui.screens.confirm import ConfirmScreen
    from tui_agent.ui.screens.pickers import ChoiceScreen

    app = make_app(repo)
    async with app.run_test(size=(160, 40)) as pilot:
        await ready(pilot)
        for body in ("return x + x", "return 2 * x", "return x * 2"):
            await catalog_of(app.runtime).save("double", tool_source("double", body))
        await wait_until(pilot, lambda: "double" in row_names(app))
        await pilot.press("f3", "U")
        await wait_until(pilot, lambda: isinstance(app.screen, ChoiceScreen), message="the version picker")
        await pilot.press("down", "enter")  # the older of the two earlier versions: "return x + x"
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), message="the confirmation")
        assert "+    return x * 2" in app.diff_pane.diff_text and "-    return x + x" in app.diff_pane.diff_text
        await pilot.press("y")
        await wait_until(pilot, lambda: "return x + x" in (repo / ".agent" / "tools" / "double.py").read_text(), message="the revert")
        await wait_until(pilot, lambda: git(repo, "log", "-1", "--format=%s").startswith("tuiagent: revert tool double"), message="its commit")


@pytest.mark.parametrize("size", [(200, 50), (80, 24)])
async def test_typing_while_the_conversation_has_the_focus_goes_to_the_prompt(repo: Path, size: tuple[int, int]) -> None:
    app = make_app(repo)
    async with app.run_test(size=size) as pilot:
        await ready(pilot)
        app.prompt_area.insert("draft ")
        app.conversation.focus()
        await pilot.pause()
        assert app.focused is app.conversation
        burst(app, "h", "i")  # both reach the conversation before the focus moves: neither is lost
        await wait_until(pilot, lambda: app.focused is app.prompt_area, message="the focus in the prompt")
        await pilot.press("space", "?")
        await wait_until(pilot, lambda: app.prompt_area.text == "draft hi ?", message=f"the typed text in the prompt ({app.prompt_area.text!r})")
        assert app.focused is app.prompt_area
        app.conversation.focus()
        await pilot.press("pageup", "ctrl+u")  # keys that are not text keep their meaning there
        assert app.focused is app.conversation and app.prompt_area.text == "draft hi ?"


def modal(name: str) -> Screen[Any]:
    from tui_agent.ui.screens.approval import ApprovalScreen
    from tui_agent.ui.screens.argument_form import ArgumentFormScreen
    from tui_agent.core.tending.care import CareReport
    from tui_agent.ui.screens.catalog_care import CatalogCareScreen
    from tui_agent.ui.screens.confirm import ConfirmScreen
    from tui_agent.ui.screens.elicitation import ElicitationScreen

    schema = {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}
    if name == "care":
        return CatalogCareScreen(CareReport([], []))
    if name == "elicitation":
        return ElicitationScreen("everything", "a number?", schema)
    if name == "source":
        return SourceScreen("double", "def double(x):\n    return 2 * x\n")
    if name == "confirm":
        return ConfirmScreen("Prune double?", yes="Prune", no="Keep")
    if name == "approval":
        return ApprovalScreen(kind="shell", tool="run_shell", summary="ls", detail="ls")
    return ArgumentFormScreen("double", schema)


MODALS = ("source", "confirm", "approval", "form", "elicitation", "care")


@pytest.mark.parametrize("name", MODALS)
async def test_quitting_while_a_modal_is_being_mounted_raises_nothing(repo: Path, name: str) -> None:
    """A modal pushed the moment the app quits (v then ctrl+q, faster than a frame) is pruned while it mounts: it must
    not look up its own children then (a focus query in on_mount raised NoMatches on the way out)."""
    app = make_app(repo)
    async with app.run_test(size=(120, 30)) as pilot:
        await ready(pilot)
        app.push_screen(modal(name))
    assert app.return_code in (0, None)


async def test_ctrl_c_in_a_modal_does_what_escape_does(repo: Path) -> None:
    """Each modal in turn, in one app (the prompt box is empty: no typing goes on, so a key answers at once)."""
    app = make_app(repo)
    async with app.run_test(size=(120, 30)) as pilot:
        await ready(pilot)
        assert not app.prompt_area.text
        for name in MODALS:
            answers: dict[str, Any] = {}
            for key in ("escape", "ctrl+c"):
                screen = modal(name)
                app.push_screen(screen, callback=lambda result, key=key, answers=answers: answers.__setitem__(key, result))
                await wait_until(pilot, lambda screen=screen: app.screen is screen and screen.is_mounted, message=f"the {name} modal")
                await pilot.pause()
                await pilot.press(key)
                await wait_until(pilot, lambda screen=screen: app.screen is not screen, message=f"{key} closing the {name} modal")
            assert answers["ctrl+c"] == answers["escape"], name
        assert not any("again to quit" in message for message in notifications(app))


async def test_the_filter_and_forms_keep_joiners_typed(repo: Path) -> None:
    """Textual's Input drops what `str.isprintable` refuses: a ZWJ or ZWNJ typed in the catalog filter stays."""
    app = make_app(repo)
    async with app.run_test(size=(120, 30)) as pilot:
        await ready(pilot)
        app.action_show_pane("catalog")
        box = app.catalog_pane.filter_box
        box.focus()
        await pilot.pause()
        assert app._driver is not None
        for key, character in (("a", "a"), ("zero_width_non_joiner", "\u200c"), ("b", "b")):
            event = events.Key(key, character)
            event.set_sender(app)
            app._driver.send_message(event)
        await wait_until(pilot, lambda: box.value == "a\u200cb", message=f"the joiner kept ({box.value!r})")
