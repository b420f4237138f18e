"""`/` command and `@file` completion in the prompt, and the mentioned files attached to what the model receives."""

from __future__ import annotations

from pathlib import Path

from tests.fake_messages_api import reply, text
from tests.scripted_model import ScriptedModel
from tests.ui_support import SIZE, make_app, ready, turn_answered, wait_until
from tui_agent.ui.completion import attach_mentions, file_candidates, shown_prompt, slash_candidates
from tui_agent.ui.widgets.completion_menu import CompletionMenu


def test_slash_candidates_come_with_descriptions() -> None:
    found = slash_candidates("/re", {"resume": "resume a session", "recipes": "list recipes", "clear": "clear"})
    assert [(c.label, c.description) for c in found] == [("/recipes", "list recipes"), ("/resume", "resume a session")]


def test_fuzzy_files_prefer_the_file_name() -> None:
    files = ["tui_agent/ui/app.py", "tui_agent/ui/app.tcss", "tests/test_app_pure.py", "README.md"]
    assert [c.label for c in file_candidates("@apppy", files)][:2] == ["@tui_agent/ui/app.py", "@tests/test_app_pure.py"]
    assert [c.label for c in file_candidates("@rdme", files)] == ["@README.md"]


def test_attachments_stay_inside_the_project(tmp_path: Path) -> None:
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "notes.md").write_text("alpha\nbeta\n")
    (tmp_path / "secret.txt").write_text("outside")
    (tmp_path / "project" / "blob.bin").write_bytes(b"\0\1")
    sent, attached, problems = attach_mentions("see @notes.md and @../secret.txt and @blob.bin, @someone", tmp_path / "project")
    assert attached == ["notes.md"] and "alpha\nbeta" in sent and "outside" not in sent
    assert problems == ["@../secret.txt: outside the project, not attached", "@blob.bin: binary, not attached (the agent can read it with its tools)"]
    assert shown_prompt(sent) == "see @notes.md and @../secret.txt and @blob.bin, @someone\n📎 notes.md (2 lines)"


async def test_typing_completes_commands_and_files_and_the_file_is_attached(repo: Path, scripted: ScriptedModel) -> None:
    (repo / "docs").mkdir()
    (repo / "docs" / "limits.txt").write_text("max=10\n")
    scripted.enqueue(reply(text("Max is 10.")))
    app = make_app(repo, client=scripted)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        menu = app.query_one("#completion-menu", CompletionMenu)
        await pilot.press("slash", "r", "e")
        assert menu.is_open and [c.label for c in menu.candidates][:4] == ["/recipes", "/redo", "/restore", "/resume"]
        assert "list the recipes" in menu.candidates[0].description
        await pilot.press("down", "down", "down", "tab")
        assert app.prompt_area.text == "/resume " and not menu.is_open
        app.prompt_area.load_text("")
        await pilot.press(*"what is in @lim")
        await wait_until(pilot, lambda: menu.is_open and menu.candidates[0].label == "@docs/limits.txt", message="the file candidate")
        await pilot.press("enter")  # enter takes the completion, it does not send
        assert app.prompt_area.text == "what is in @docs/limits.txt " and not app.turns.running
        await pilot.press("escape", "enter")
        await wait_until(pilot, lambda: turn_answered(app, "Max is 10."), timeout=30, message="the turn")
        sent = scripted.requests[-1].last_user_text()
        assert sent.startswith("what is in @docs/limits.txt") and '<attached-file path="docs/limits.txt" lines="1">\nmax=10\n</attached-file>' in sent
        assert [e.text for e in app.conversation.entries if e.kind == "user"] == ["what is in @docs/limits.txt "]
        assert any(e.text == "Attached: docs/limits.txt" for e in app.conversation.entries)


async def test_a_command_typed_in_one_burst_runs_as_typed_not_as_the_menu_first_showed_it(repo: Path) -> None:
    """Keys that arrive together are handled before the text's Changed messages: enter must see "/clear", not "/c"."""
    from textual import events

    app = make_app(repo)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        menu = app.query_one("#completion-menu", CompletionMenu)
        await pilot.press("slash", "c")
        assert menu.is_open and menu.chosen() is not None and menu.chosen().label == "/care"  # type: ignore[union-attr]
        driver = app._driver  # the way Pilot.press sends keys, without its wait for idle between them: a burst
        assert driver is not None
        for key, char in [*((c, c) for c in "lear"), ("enter", "\r")]:
            event = events.Key(key, char)
            event.set_sender(app)
            driver.send_message(event)
        await wait_until(pilot, lambda: any(e.text.startswith("Conversation cleared") for e in app.conversation.entries),
                         message="/clear's notice")
        assert not any(screen.__class__.__name__ == "CatalogCareScreen" for screen in app.screen_stack)
