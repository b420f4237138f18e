"""The conversation follows: sending a prompt scrolls to the end; a reader scrolled up gets a "new below" marker instead."""

from __future__ import annotations

from pathlib import Path

from textual import events

from tests.fake_messages_api import reply, text
from tests.scripted_model import ScriptedModel
from tests.ui_support import send, make_app, ready, wait_until
from tui_agent.ui.app import TuiAgentApp

LONG = "\n\n".join(f"Paragraph {i}: " + "words " * 20 for i in range(30))


def answered(app: TuiAgentApp, turns: int) -> bool:
    """`turns` turns are over and the last one's whole (long) answer is in the conversation."""
    users = sum(1 for entry in app.conversation.entries if entry.kind == "user")
    last = app.conversation.entries[-1] if app.conversation.entries else None
    return not app.turns.running and users == turns and last is not None and last.kind == "assistant" and "Paragraph 29" in last.text


def at_bottom(app: TuiAgentApp) -> bool:
    conversation = app.conversation
    return conversation.max_scroll_y > 0 and conversation.scroll_y >= conversation.max_scroll_y - 1


def still(app: TuiAgentApp) -> bool:
    """No scroll under way: an animated one (page up, end) has reached its target."""
    return app.conversation.scroll_y == app.conversation.scroll_target_y


async def followed(pilot, app: TuiAgentApp, grown_from: float) -> None:  # type: ignore[no-untyped-def]
    """The view has grown past `grown_from` (what was added is laid out) and is at the end, not scrolling."""
    await wait_until(pilot, lambda: app.conversation.max_scroll_y > grown_from and at_bottom(app) and still(app),
                     message="the view following to the end")


async def paged_up(pilot, app: TuiAgentApp, *keys: str) -> None:  # type: ignore[no-untyped-def]
    await pilot.press(*keys)
    await wait_until(pilot, lambda: not at_bottom(app) and still(app), message="the view paged up")


async def first_answer_at_the_end(pilot, app: TuiAgentApp) -> None:  # type: ignore[no-untyped-def]
    """The app ready, a first prompt sent and answered, the view at the end."""
    await ready(pilot)
    await send(pilot, app, "first")
    await wait_until(pilot, lambda: answered(app, 1), timeout=30, message="the first answer")
    await wait_until(pilot, lambda: at_bottom(app), message="the view at the end")


async def test_sending_a_prompt_after_page_up_scrolls_to_the_end(repo: Path, scripted: ScriptedModel) -> None:
    scripted.enqueue(reply(text(LONG)), reply(text("Second answer. " + LONG)))
    app = make_app(repo, client=scripted)
    async with app.run_test(size=(80, 24)) as pilot:
        await first_answer_at_the_end(pilot, app)
        app.conversation.focus()
        await paged_up(pilot, app, "pageup", "pageup")
        grown_from = app.conversation.max_scroll_y
        await send(pilot, app, "second")
        await wait_until(pilot, lambda: answered(app, 2), timeout=30, message="the second answer")
        await followed(pilot, app, grown_from)
        assert not app.conversation.new_below.display


async def fill_the_view(pilot, app: TuiAgentApp) -> None:  # type: ignore[no-untyped-def]
    """Six tall notices: more than an 80x24 conversation shows."""
    for i in range(6):
        await app.add_notice(f"notice {i}\n" + "line\n" * 6)
    await wait_until(pilot, lambda: at_bottom(app) and still(app), message="the filled view at the end")


async def test_a_reader_scrolled_up_sees_a_new_below_marker_and_is_not_moved(repo: Path, scripted: ScriptedModel) -> None:
    app = make_app(repo, client=scripted)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        await fill_the_view(pilot, app)
        assert at_bottom(app)
        app.conversation.focus()
        await paged_up(pilot, app, "pageup")
        where = app.conversation.scroll_y
        marker = app.conversation.new_below
        await app.add_notice("something new happened")
        await wait_until(pilot, lambda: marker.display, message="the new below marker")
        await pilot.pause(0.2)
        await wait_until(pilot, lambda: still(app), message="the view still")
        assert app.conversation.scroll_y == where  # the reader is not moved
        assert "new below" in str(marker.render())
        await pilot.press("end")  # back at the end: the marker goes, the view follows again
        await wait_until(pilot, lambda: at_bottom(app) and still(app) and not marker.display, message="the view at the end")
        grown_from = app.conversation.max_scroll_y
        await app.add_notice("and more\n" + "line\n" * 6)
        await followed(pilot, app, grown_from)
        assert not marker.display


async def test_after_unfolding_a_tool_call_and_after_resume_sending_still_follows(repo: Path, scripted: ScriptedModel) -> None:
    from tests.fake_messages_api import tool_use
    from tui_agent.ui.widgets.messages import ToolCallBlock

    (repo / "notes.txt").write_text("".join(f"note {n}\n" for n in range(200)))
    scripted.enqueue(reply(tool_use("read_file", {"path": "notes.txt"})), reply(text(LONG)), reply(text("Second answer. " + LONG)),
                reply(text("Third answer. " + LONG)))
    app = make_app(repo, client=scripted)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        await send(pilot, app, "read the notes")
        await wait_until(pilot, lambda: answered(app, 1), timeout=30, message="the first answer")
        block = next(w for w in app.conversation.children if isinstance(w, ToolCallBlock))
        block.collapsed = False  # unfolded: 200 lines of result, the reader up there
        app.conversation.scroll_to_widget(block, animate=False, top=True)
        await pilot.pause(0.2)
        assert not at_bottom(app)
        await send(pilot, app, "second")
        await wait_until(pilot, lambda: answered(app, 2), timeout=30, message="the second answer")
        await wait_until(pilot, lambda: at_bottom(app) and still(app), message="the view at the end")
        session_id = app.runtime.core.session.id

    app = make_app(repo, client=scripted)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        await send(pilot, app, f"/resume {session_id}")
        await wait_until(pilot, lambda: any(e.text == f"Resumed session {session_id}." for e in app.conversation.entries),
                         message="the resumed session")
        app.conversation.focus()
        await paged_up(pilot, app, "pageup", "pageup")
        grown_from = app.conversation.max_scroll_y
        await send(pilot, app, "third")
        await wait_until(pilot, lambda: answered(app, 3), timeout=30, message="the third answer")
        await followed(pilot, app, grown_from)
        assert not app.conversation.new_below.display


async def test_the_new_below_marker_names_a_key_that_follows_from_the_prompt(repo: Path, scripted: ScriptedModel) -> None:
    app = make_app(repo, client=scripted)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        await fill_the_view(pilot, app)
        app.prompt_area.focus()  # where the person is: the keys below go to the prompt box
        await paged_up(pilot, app, "pageup")
        marker = app.conversation.new_below
        await app.add_notice("something new happened")
        await wait_until(pilot, lambda: marker.display, message="the new below marker")
        assert "shift+pgdn" in str(marker.render()), marker.render()
        await pilot.press("shift+pagedown")
        await wait_until(pilot, lambda: at_bottom(app) and still(app) and not marker.display, message="the view at the end")
        grown_from = app.conversation.max_scroll_y
        await app.add_notice("and more\n" + "line\n" * 6)
        await followed(pilot, app, grown_from)
        assert not marker.display


async def test_a_prompt_sent_in_the_same_frame_as_a_page_up_still_follows(repo: Path, scripted: ScriptedModel) -> None:
    """PageUp's scroll waits for the next refresh; an Enter handled before that refresh sends and follows first: the
    PageUp's deferred scroll must not then take the view (and the reply) away from the end."""
    scripted.enqueue(reply(text(LONG)), reply(text("Second answer. " + LONG)))
    app = make_app(repo, client=scripted)
    async with app.run_test(size=(80, 24)) as pilot:
        await first_answer_at_the_end(pilot, app)
        app.prompt_area.focus()
        await pilot.pause(0.1)
        app.prompt_area.insert("second")
        app.post_message(events.Key("pageup", None))  # both keys read in one go, as a loaded terminal delivers them
        app.post_message(events.Key("enter", "\r"))
        await wait_until(pilot, lambda: answered(app, 2), timeout=30, message="the second answer")
        await pilot.pause(0.3)
        assert at_bottom(app), (app.conversation.scroll_y, app.conversation.max_scroll_y)
        assert app.conversation.following and not app.conversation.new_below.display
