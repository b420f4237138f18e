"""A reply cut mid-way and retried reads as one message: the retried text goes on in the message the partial text
started (the retry notice below it), never as a second message starting mid-sentence."""

from __future__ import annotations

from pathlib import Path

from tests.fake_messages_api import FakeMessagesAPI, cut_stream, reply, text
from tests.ui_support import SIZE, make_app, ready, wait_until
from tests.test_ui_turn import send


async def test_a_retried_reply_is_one_message(repo: Path, api: FakeMessagesAPI) -> None:
    api.enqueue(cut_stream(text("The answer is forty"), cut_chars=None), reply(text("The answer is forty-two.")))
    app = make_app(repo)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, app, "the answer?")
        await wait_until(pilot, lambda: not app.turns.running and len(api.requests) == 2, timeout=60, message="the turn")
        await pilot.pause(0.3)
        replies = [entry.text for entry in app.conversation.entries if entry.kind == "assistant"]
        assert replies == ["The answer is forty-two."]
        kinds = [entry.kind for entry in app.conversation.entries]
        assert kinds[kinds.index("assistant") + 1] == "notice"
        notice = app.conversation.entries[kinds.index("assistant") + 1].text
        assert "cut off" in notice and "retrying" in notice
