"""A long paste shows in the prompt box as one token ([Pasted text #1 · 6,000 chars, 120 lines]) that edits as one unit
and ctrl+o expands; the model receives exactly the text pasted, and a failed prompt or a recalled one keeps all of it."""

from __future__ import annotations

from pathlib import Path

from textual import events
from textual.pilot import Pilot

from tests.fake_messages_api import reply, text
from tests.scripted_model import ScriptedModel, refusal
from tests.ui_support import make_app, ready, turn_answered, wait_until
from tui_agent.ui.app import TuiAgentApp
from tui_agent.ui.widgets.messages import UserMessage

LINE = "ab\tc  \u200d\u0301 \u05e9\u05dc\u05d5\u05dd می\u200cخواهم 👩\u200d💻 {:03d} " + "x" * 16 + "  "
"""A tab, trailing spaces, a joiner and a non-joiner, a combining mark, right-to-left text."""
PASTED = "\n".join(LINE.format(i) for i in range(120)) + "\t"
SIZE = (100, 30)


def last_prompt(scripted: ScriptedModel) -> str:
    content = scripted.requests[-1].messages[-1]["content"]
    return content if isinstance(content, str) else "".join(block.get("text", "") for block in content)


async def paste(pilot: Pilot, app: TuiAgentApp, pasted: str) -> None:
    """A bracketed paste into the focused prompt box, as the terminal delivers it."""
    app.prompt_area.focus()
    await pilot.pause()
    app.post_message(events.Paste(pasted))  # as the driver posts it: the app hands it to the focused widget
    await pilot.pause()


async def test_a_long_paste_is_one_token_and_the_model_receives_it_exactly(repo: Path, scripted: ScriptedModel) -> None:
    assert len(PASTED) == 6000 and PASTED.count("\n") == 119
    scripted.enqueue(reply(text("seen")))
    app = make_app(repo, client=scripted)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await paste(pilot, app, "short\tpaste  \nsecond line")  # a short paste is as typed, tabs and spaces kept
        assert app.prompt_area.text == "short\tpaste  \nsecond line"
        await pilot.press("space", "s", "e", "e", "space")
        await paste(pilot, app, PASTED)
        await pilot.press("space", "o", "k")
        box = app.prompt_area
        assert box.text == "short\tpaste  \nsecond line see [Pasted text #1 · 6,000 chars, 120 lines] ok"
        assert box.document.line_count == 2 and box.size.height <= 3
        await pilot.press("enter")
        await wait_until(pilot, lambda: turn_answered(app, "seen"), timeout=60, message="the reply")
        assert last_prompt(scripted) == f"short\tpaste  \nsecond line see {PASTED} ok"


async def test_the_token_is_one_unit_typing_around_it_and_backspace_removes_it_whole(repo: Path, scripted: ScriptedModel) -> None:
    scripted.enqueue(reply(text("seen")))
    app = make_app(repo, client=scripted)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("a", "b")
        await paste(pilot, app, PASTED)
        box = app.prompt_area
        token = "[Pasted text #1 · 6,000 chars, 120 lines]"
        await pilot.press("left")  # one step over the whole token
        assert box.cursor_location == (0, 2)
        await pilot.press("c", "right", "d")
        assert box.text == f"abc{token}d" and box.full_text == f"abc{PASTED}d"
        await pilot.press("left", "left", "delete")  # delete at its start takes all of it too
        assert box.text == "abcd"
        await paste(pilot, app, PASTED)
        await pilot.press("backspace")
        assert box.text == "abcd"
        await paste(pilot, app, PASTED)
        box.move_cursor((0, 3 + 5))  # inside the token: typing goes after it, never into it
        await pilot.press("e")
        assert box.text == "abc[Pasted text #3 · 6,000 chars, 120 lines]ed"
        await pilot.press("enter")
        await wait_until(pilot, lambda: turn_answered(app, "seen"), timeout=60, message="the reply")
        assert last_prompt(scripted) == f"abc{PASTED}ed"


async def test_ctrl_o_expands_the_paste_into_editable_text(repo: Path, scripted: ScriptedModel) -> None:
    app = make_app(repo, client=scripted)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        assert "ctrl+o" not in app.screen.active_bindings
        await pilot.press("h", "i", "space")
        await paste(pilot, app, PASTED)
        assert "ctrl+o" in app.screen.active_bindings  # the footer offers it while a token is in the box
        app.prompt_area.select_all()
        assert app.prompt_area.selected_text == f"hi {PASTED}"  # ctrl+c copies what was pasted, not the token
        app.prompt_area.move_cursor(app.prompt_area.document.end)
        await pilot.press("ctrl+o")
        assert app.prompt_area.text == f"hi {PASTED}"
        assert "ctrl+o" not in app.screen.active_bindings


async def test_a_failed_prompt_and_a_recalled_one_come_back_with_the_whole_paste(repo: Path, scripted: ScriptedModel) -> None:
    scripted.enqueue(refusal(),
                     reply(text("second time lucky")))
    app = make_app(repo, client=scripted)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("l", "o", "o", "k", "space")
        await paste(pilot, app, PASTED)
        await pilot.press("enter")
        box = app.prompt_area
        await wait_until(pilot, lambda: bool(box.text) and not app.turns.running, timeout=30, message="the failed prompt back")
        assert box.text == "look [Pasted text #1 · 6,000 chars, 120 lines]" and box.full_text == f"look {PASTED}"
        await pilot.press("enter")
        await wait_until(pilot, lambda: turn_answered(app, "second time lucky"), timeout=60, message="the reply")
        assert last_prompt(scripted) == f"look {PASTED}"
        assert box.text == ""
        await pilot.press("up")  # the history keeps all of it
        assert box.text == "look [Pasted text #1 · 6,000 chars, 120 lines]" and box.full_text == f"look {PASTED}"


async def test_a_long_prompt_in_the_conversation_unfolds_from_the_keyboard(repo: Path, scripted: ScriptedModel) -> None:
    scripted.enqueue(reply(text("seen")))
    app = make_app(repo, client=scripted)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await paste(pilot, app, PASTED)
        await pilot.press("enter")
        await wait_until(pilot, lambda: turn_answered(app, "seen"), timeout=60, message="the reply")
        message = next(iter(app.conversation.query(UserMessage)))
        assert message in app.screen.focus_chain  # tab reaches it, as it reaches a tool call's title
        message.focus()
        await pilot.pause()
        await pilot.press("enter")
        assert message.expanded and PASTED in str(message.content)
        await pilot.press("enter")
        assert not message.expanded
