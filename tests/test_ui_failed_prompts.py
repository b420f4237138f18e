"""A failed prompt comes back to the input box alone: prompts queued behind it wait (they would fail the same way
and pile up in the box, newest first); sent again, it goes first and the queue follows in order."""

from __future__ import annotations

from pathlib import Path

from tests.fake_messages_api import reply, text
from tests.scripted_model import ScriptedModel, refusal
from tests.ui_support import SIZE, make_app, ready, turn_answered, wait_until
from tests.test_ui_turn import send


async def test_a_failed_prompt_returns_alone_and_the_queue_waits_for_it(repo: Path, scripted: ScriptedModel) -> None:
    scripted.enqueue(refusal(),
                     reply(text("first answered")), reply(text("second answered")))
    app = make_app(repo, client=scripted)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        assert app.turns.start("first prompt")
        assert not app.turns.start("second prompt")  # queued behind the running turn
        await wait_until(pilot, lambda: app.prompt_area.text == "first prompt" and not app.turns.running, timeout=30,
                         message="the failed prompt back in the box")
        await pilot.pause(0.5)
        assert app.prompt_area.text == "first prompt" and len(scripted.requests) == 1
        assert [item.text for item in app.turns.queue] == ["second prompt"]
        await send(pilot, app, app.prompt_area.text)
        await wait_until(pilot, lambda: turn_answered(app, "second answered"), timeout=60, message="both answered")
        assert "first prompt" in str(scripted.requests[1].messages[-1]) and "second prompt" in str(scripted.requests[2].messages[-1])
