"""/resume in the app goes through the core (`Runtime.resume`): session, messages, usage and the per-session authored tools."""

from __future__ import annotations

import json
from pathlib import Path

from tests.fake_messages_api import reply, text, tool_use
from tests.scripted_model import ScriptedModel
from tests.ui_support import SIZE, make_app, ready, tool_source, turn_answered, wait_until
from tui_agent.core.runtime_state import agent_of


def write_earlier_session(root: Path) -> None:
    """An earlier session as the core writes it: header, messages, events, and a usage record."""
    lines = [
        {"type": "session", "id": "earlier", "model": "m"},
        {"type": "event", "event": "TurnStarted", "data": {"prompt": "what is in app.py?", "session_id": "earlier"}},
        {"type": "message", "message": {"role": "user", "content": "what is in app.py?"}},
        {"type": "event", "event": "TextDelta", "data": {"text": "It prints hello."}},
        {"type": "message", "message": {"role": "assistant", "content": [{"type": "text", "text": "It prints hello."}]}},
    ]
    sessions = root / ".agent" / "sessions"
    sessions.mkdir(parents=True, exist_ok=True)
    (sessions / "earlier.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))


async def test_resume_switches_the_session_through_the_runtime(repo: Path, scripted: ScriptedModel) -> None:
    scripted.enqueue(
        reply(text("Writing it."), tool_use("create_tool", {"name": "double", "source": tool_source("double")})),
        reply(text("Done.")),
        reply(text("Still hello.")),
    )
    write_earlier_session(repo)
    app = make_app(repo, client=scripted)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        runtime, agent = app.runtime, agent_of(app.runtime)
        app.prompt_area.insert("make a doubling tool")
        await pilot.press("enter")
        await wait_until(pilot, lambda: turn_answered(app, "Done."), timeout=30, message="the first turn")
        assert agent.authored_names == ["double"] and runtime.core.session.id != "earlier"

        app.prompt_area.insert("/resume earlier")
        await pilot.press("enter")
        await wait_until(pilot, lambda: any(entry.text == "It prints hello." for entry in app.conversation.entries), message="the transcript")
        # the core's switch: one session object for runtime and agent, its messages, and no tools "authored in this session"
        assert runtime.core.session.id == "earlier" and agent.session is runtime.core.session
        assert [message["role"] for message in agent.messages] == ["user", "assistant"]
        assert agent.authored_names == []

        app.prompt_area.insert("and now?")
        await pilot.press("enter")
        await wait_until(pilot, lambda: turn_answered(app, "Still hello."), timeout=30, message="the next turn")
        assert "what is in app.py?" in json.dumps(scripted.requests[-1].messages[0])
    saved = (repo / ".agent" / "sessions" / "earlier.jsonl").read_text()
    assert "and now?" in saved and "Still hello." in saved


async def test_clear_starts_a_new_session_file_that_resume_can_leave(repo: Path, scripted: ScriptedModel) -> None:
    from tui_agent.ui.screens.pickers import ChoiceScreen

    scripted.enqueue(reply(text("Hello there.")))
    app = make_app(repo, client=scripted)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        app.prompt_area.insert("say hello")
        await pilot.press("enter")
        await wait_until(pilot, lambda: turn_answered(app, "Hello there."), timeout=30, message="the turn")
        first = app.runtime.core.session.id
        app.prompt_area.insert("/clear")
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.runtime.core.session.id != first, message="a new session")
        assert agent_of(app.runtime).messages == [] and app.usage.tokens_in == 0
        records = [json.loads(line) for line in (repo / ".agent" / "sessions" / f"{first}.jsonl").read_text().splitlines()]
        assert all(record.get("type") != "clear" for record in records)  # the earlier file is left as it was
        app.prompt_area.insert("/resume")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ChoiceScreen), message="the session picker")
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.runtime.core.session.id == first, message="back in the first session")
        assert any(entry.text == "Hello there." for entry in app.conversation.entries)
        assert [message["role"] for message in agent_of(app.runtime).messages] == ["user", "assistant"]
