"""The TUI shows the model's thinking folded above its reply, live and after /resume (the real app, the fake API)."""

from __future__ import annotations

from pathlib import Path

from tests.fake_messages_api import FakeMessagesAPI, reply, text, thinking, tool_use
from tests.ui_support import SIZE, make_app, ready, turn_answered, wait_until
from tui_agent.core.agent.sessions import read_events
from tui_agent.ui.transcript import transcript_of
from tui_agent.ui.widgets.messages import ThinkingBlock
from tui_agent.core.runtime_state import agent_of


async def test_thinking_is_folded_above_the_reply(repo: Path, api: FakeMessagesAPI) -> None:
    api.enqueue(reply(thinking("First I look at the readme."), tool_use("read_file", {"path": "README.md"})),
                reply(thinking("It is short. "), thinking("Say so."), text("A short readme.")))
    app = make_app(repo, model="claude-opus-4-6")
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        app.prompt_area.focus()
        app.prompt_area.insert("what is in the readme?")
        await pilot.press("enter")
        await wait_until(pilot, lambda: turn_answered(app, "A short readme."), timeout=60, message="the answer")
        entries = app.conversation.entries
        kinds = [entry.kind for entry in entries]
        assert kinds[-4:] == ["thinking", "tool", "thinking", "assistant"], kinds
        assert entries[-4].text == "First I look at the readme." and entries[-2].text == "It is short. Say so."
        blocks = list(app.conversation.query(ThinkingBlock))
        assert len(blocks) == 2 and all(block.collapsed for block in blocks) and "words" in blocks[0].title
        session = agent_of(app.runtime).session_id if app.runtime and agent_of(app.runtime) else ""
    decoded = read_events(repo / ".agent" / "sessions" / f"{session}.jsonl")
    resumed = [entry.kind for entry in transcript_of(decoded.events).entries]
    assert resumed[-4:] == ["thinking", "tool", "thinking", "assistant"]
