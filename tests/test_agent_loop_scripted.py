"""The agent loop against an in-process scripted model (no HTTP): the shape of what it sends, fast."""

from __future__ import annotations

from pathlib import Path

from tests.scripted_model import ScriptedModel, text_block, tool_use_block
from tui_agent.core.agent.loop import Agent
from tui_agent.core.agent.permissions import Permissions, deny_all
from tui_agent.core.agent.sessions import SessionLog, load_messages
from tui_agent.core.events import ToolCallFinished, TurnFailed, TurnFinished
from tui_agent.core.project import Project
from tui_agent.core.settings import Settings


def scripted_agent(root: Path, model: ScriptedModel) -> Agent:
    project = Project.at(root)
    return Agent(project=project, settings=Settings(), client=model, permissions=Permissions("ask", deny_all),
                 session=SessionLog.create(project, model=model.model))


async def test_a_tool_call_is_answered_in_the_next_request_and_the_turn_ends_on_text(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("alpha\nbeta\n")
    model = ScriptedModel().say(text_block("Reading."), tool_use_block("read_file", {"path": "notes.txt"}, "toolu_1"))
    model.say(text_block("Two lines."))
    agent = scripted_agent(tmp_path, model)

    events = [event async for event in agent.run_turn("how long is notes.txt?")]

    finished = [e for e in events if isinstance(e, ToolCallFinished)]
    assert [(e.name, e.is_error) for e in finished] == [("read_file", False)] and "beta" in finished[0].result
    assert isinstance(events[-1], TurnFinished) and events[-1].text == "Two lines."
    second = model.requests[1]["messages"]
    assert [m["role"] for m in second] == ["user", "assistant", "user"]
    assert second[2]["content"][0]["type"] == "tool_result" and second[2]["content"][0]["tool_use_id"] == "toolu_1"
    assert load_messages(agent.session.path)[-1]["content"][0]["text"] == "Two lines."


async def test_a_model_error_fails_the_turn_and_the_next_prompt_still_works(tmp_path: Path) -> None:
    model = ScriptedModel().fail("overloaded", "the API is overloaded").say(text_block("Back."))
    agent = scripted_agent(tmp_path, model)

    failed = [event async for event in agent.run_turn("first")]
    after = [event async for event in agent.run_turn("second")]

    assert isinstance(failed[-1], TurnFailed) and failed[-1].kind == "overloaded"
    assert isinstance(after[-1], TurnFinished) and after[-1].text == "Back."
    assert model.requests[1]["messages"][0]["role"] == "user"
