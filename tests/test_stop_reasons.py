"""Every stop reason of the Messages API gets its handling and a message, through the real SDK and the fake API."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.agent_helpers import agent_runtime, of_type, run_turn
from tests.fake_messages_api import FakeMessagesAPI, reply, text, tool_use
from tui_agent.core.agent.stops import REFUSED_PLACEHOLDER
from tui_agent.core.events import Notice, ToolCallFinished, TurnFailed, TurnFinished


async def test_refusal_is_said_and_the_refused_reply_leaves_the_conversation(repo: Path) -> None:
    with FakeMessagesAPI() as api:
        api.enqueue(reply(text("I can't help with th"), stop_reason="refusal"), reply(text("Sure.")))
        async with agent_runtime(repo, api) as runtime:
            events = await run_turn(runtime, "something")
            await run_turn(runtime, "something else")
    failed = of_type(events, TurnFailed)[-1]
    assert failed.kind == "refusal" and "declined" in failed.message and failed.prompt == "" and not of_type(events, TurnFinished)
    sent = api.requests[1].messages[1]
    assert sent["content"] == [{"type": "text", "text": REFUSED_PLACEHOLDER}]  # the prompt stays, the refused text does not


def test_headless_reports_a_refusal_as_a_failed_run(repo: Path, api: FakeMessagesAPI, capsys: pytest.CaptureFixture[str]) -> None:
    from tui_agent.cli import main

    api.enqueue(reply(text("I can't"), stop_reason="refusal"))
    assert main(["--project", str(repo), "-p", "something", "--output-format", "json"]) == 1
    result = json.loads(capsys.readouterr().out)
    assert result["is_error"] is True and result["error_kind"] == "refusal" and "declined" in result["error"]


async def test_context_window_exceeded_cuts_the_last_call_and_says_so(repo: Path) -> None:
    with FakeMessagesAPI() as api:
        api.enqueue(reply(tool_use("read_file", {"path": "README.md"}), stop_reason="model_context_window_exceeded"), reply(text("ok")))
        async with agent_runtime(repo, api) as runtime:
            events = await run_turn(runtime, "read")
    assert any("context window" in e.message and e.level == "warning" for e in of_type(events, Notice))
    call = of_type(events, ToolCallFinished)[0]
    assert call.is_error and "cut off" in call.result  # its input may be incomplete: not run
    assert of_type(events, TurnFinished)[-1].text == "ok"


async def test_pause_turn_continues_the_turn_with_the_paused_reply(repo: Path) -> None:
    with FakeMessagesAPI() as api:
        api.enqueue(reply(text("Working on it."), stop_reason="pause_turn"), reply(text("Done.")))
        async with agent_runtime(repo, api) as runtime:
            events = await run_turn(runtime, "long task")
    assert len(api.requests) == 2
    assert api.requests[1].messages[-1] == {"role": "assistant", "content": [{"type": "text", "text": "Working on it."}]}
    assert any("paused" in e.message for e in of_type(events, Notice))
    assert of_type(events, TurnFinished)[-1].text == "Done."


async def test_max_tokens_and_stop_sequence_are_named(repo: Path) -> None:
    with FakeMessagesAPI() as api:
        api.enqueue(reply(text("cut"), stop_reason="max_tokens"), reply(text("stopped"), stop_reason="stop_sequence"))
        async with agent_runtime(repo, api, model="qwen2.5-coder") as runtime:
            cut = await run_turn(runtime, "a")
            stopped = await run_turn(runtime, "b")
    assert any("output limit (8192 tokens)" in e.message for e in of_type(cut, Notice))
    assert of_type(cut, TurnFinished)[-1].stop_reason == "max_tokens"
    assert any("stop sequence" in e.message for e in of_type(stopped, Notice))
    assert of_type(stopped, TurnFinished)[-1].stop_reason == "stop_sequence"
