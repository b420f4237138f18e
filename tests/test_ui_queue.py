"""Prompts typed while a turn runs wait in a visible queue (editable, cancellable) and go in order; a failed turn hands its prompt back."""

from __future__ import annotations

from pathlib import Path

from tests.fake_messages_api import reply, text
from tests.scripted_model import ScriptedModel
from tests.ui_support import SIZE, make_app, ready, turn_answered, turn_failed_shown, wait_until
from tui_agent.core.agent.model import ModelError
from tui_agent.core.errors import ErrorKind
from tui_agent.ui.app import TuiAgentApp
from tui_agent.ui.widgets.queued_prompts import QueuedPrompts


async def type_and_send(pilot, app: TuiAgentApp, prompt: str) -> None:  # type: ignore[no-untyped-def]
    app.screen.set_focus(app.prompt_area)
    app.prompt_area.insert(prompt)
    await pilot.press("enter")


def queue_widget(app: TuiAgentApp) -> QueuedPrompts:
    return app.query_one("#prompt-queue", QueuedPrompts)


async def test_prompts_typed_during_a_turn_are_shown_queued_and_sent_in_order(repo: Path, scripted: ScriptedModel) -> None:
    first_done = scripted.hold(reply(text("First answer.")))
    scripted.enqueue(reply(text("Second answer.")), reply(text("Third answer.")))
    app = make_app(repo, client=scripted)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        assert not queue_widget(app).display
        await type_and_send(pilot, app, "first")
        await wait_until(pilot, lambda: app.turns.running, message="the first turn")
        await type_and_send(pilot, app, "second")
        await type_and_send(pilot, app, "/clear")  # a command waits its turn too
        await type_and_send(pilot, app, "third")
        assert [item.text for item in app.turns.queue] == ["second", "/clear", "third"]
        widget = queue_widget(app)
        assert widget.display and widget.option_count == 3 and "queued 1 second" in str(widget.get_option_at_index(0).prompt)
        first_done.set()
        await wait_until(pilot, lambda: turn_answered(app, "Third answer.") and not app.turns.queue, timeout=40, message="all three turns")
        assert [request.last_user_text() for request in scripted.requests] == ["first", "second", "third"]
        assert len(scripted.requests[-1].messages) == 1  # /clear ran between "second" and "third": a fresh conversation
        assert not widget.display


async def test_a_queued_prompt_can_be_edited_or_cancelled(repo: Path, scripted: ScriptedModel) -> None:
    slow_done = scripted.hold(reply(text("Slow answer.")))
    scripted.enqueue(reply(text("Edited answer.")))
    app = make_app(repo, client=scripted)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await type_and_send(pilot, app, "slow one")
        await wait_until(pilot, lambda: app.turns.running, message="the turn")
        await type_and_send(pilot, app, "drop me")
        await type_and_send(pilot, app, "fix me")
        widget = queue_widget(app)
        app.screen.set_focus(widget)
        widget.highlighted = 0
        await pilot.press("x")
        assert [item.text for item in app.turns.queue] == ["fix me"]
        await pilot.press("e")
        assert len(app.turns.queue) == 0 and app.prompt_area.text == "fix me" and app.focused is app.prompt_area
        app.prompt_area.insert(", edited")
        await pilot.press("enter")
        slow_done.set()
        await wait_until(pilot, lambda: turn_answered(app, "Edited answer."), timeout=40, message="both turns")
        assert [request.last_user_text() for request in scripted.requests] == ["slow one", "fix me, edited"]


async def test_a_failed_turn_puts_its_prompt_back_in_the_box(repo: Path, scripted: ScriptedModel) -> None:
    scripted.enqueue(ModelError(ErrorKind.CONTEXT_TOO_LONG, "the conversation is too long for the model (prompt is too long)"),
                     reply(text("Fine now.")))
    app = make_app(repo, client=scripted)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await type_and_send(pilot, app, "a very long paste")
        await wait_until(pilot, lambda: turn_failed_shown(app), timeout=30, message="the failed turn")
        await wait_until(pilot, lambda: app.prompt_area.text == "a very long paste", message="the prompt back in the box")
        assert any("back in the input box" in entry.text for entry in app.conversation.entries if entry.kind == "notice")
        assert app.focused is app.prompt_area
        # (that the resend is not merged with the failed prompt in the history is the core's part: issue 12, "api")


async def test_a_prompt_typed_while_the_project_opens_is_queued_then_sent(repo: Path, scripted: ScriptedModel) -> None:
    import asyncio

    from tui_agent.ui.runtime_bridge import open_runtime_for_ui

    scripted.enqueue(reply(text("Opened and answered.")))
    release = asyncio.Event()

    async def slow_opener(root, callbacks, options):  # type: ignore[no-untyped-def]
        await release.wait()
        return await open_runtime_for_ui(root, callbacks, options)

    app = make_app(repo, client=scripted, runtime_opener=slow_opener)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(0.2)
        await type_and_send(pilot, app, "early bird")
        assert [item.text for item in app.turns.queue] == ["early bird"] and queue_widget(app).display
        release.set()
        await wait_until(pilot, lambda: turn_answered(app, "Opened and answered."), timeout=40, message="the queued prompt's turn")
        assert scripted.requests[-1].last_user_text() == "early bird" and not queue_widget(app).display
