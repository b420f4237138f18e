"""Typing while the conversation has the focus is typing a prompt: every key of it (characters, Enter, Backspace)
reaches the prompt box in order, however fast they come; keys the conversation itself uses keep working there."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fake_messages_api import reply, text
from tests.scripted_model import ScriptedModel
from tests.ui_support import burst, make_app, ready, turn_answered, wait_until


def sent_prompts(scripted: ScriptedModel) -> list[str]:
    """The person's prompts the model got, oldest first (the last user message of each request that starts a turn)."""
    prompts = []
    for request in scripted.requests:
        content = request["messages"][-1]["content"]
        if isinstance(content, str):
            prompts.append(content)
        else:
            prompts.extend(block["text"] for block in content if block.get("type") == "text")
    return prompts


@pytest.mark.parametrize("focused", ["conversation", "prompt"])
@pytest.mark.parametrize("pressed", ["pilot", "burst"])
async def test_enter_typed_right_after_characters_sends_the_prompt_as_typed(repo: Path, scripted: ScriptedModel, pressed: str,
                                                                            focused: str) -> None:
    scripted.enqueue(reply(text("hello")))
    app = make_app(repo, client=scripted)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        widget = app.conversation if focused == "conversation" else app.prompt_area
        widget.focus()
        await pilot.pause()
        assert app.focused is widget
        keys = ("h", "i", "x", "backspace", "enter")
        if pressed == "pilot":
            await pilot.press(*keys)
        else:
            burst(app, *keys)
        await wait_until(pilot, lambda: turn_answered(app, "hello"), timeout=30, message="the reply")
        assert sent_prompts(scripted) == ["hi"]
        assert app.prompt_area.text == ""


async def test_keys_the_conversation_uses_keep_working_when_nothing_was_typed(repo: Path, scripted: ScriptedModel) -> None:
    app = make_app(repo, client=scripted)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        app.prompt_area.insert("draft")
        app.conversation.focus()
        await pilot.pause()
        burst(app, "pageup", "backspace", "enter", "ctrl+u")
        await pilot.pause()
        await wait_until(pilot, lambda: not app._driver or app.focused is app.conversation, message="the focus kept")
        assert app.focused is app.conversation and app.prompt_area.text == "draft" and scripted.requests == []
