"""Every request stays valid (the strict fake server checks each): cut streams, bad tool JSON, blank text, failed turns."""

from __future__ import annotations

from pathlib import Path

from tests.agent_helpers import agent_runtime, of_type, run_turn
from tests.fake_messages_api import FakeMessagesAPI, cut_stream, http_error, reply, text, tool_use, tool_use_raw
from tui_agent.core.agent.sessions import load_messages
from tui_agent.core.events import Notice, TextDelta, ToolCallFinished, ToolCallStarted, TurnFailed, TurnFinished


async def test_a_stream_cut_before_message_stop_is_retried_never_taken_as_complete(repo: Path) -> None:
    with FakeMessagesAPI() as api:
        api.enqueue(cut_stream(text("The answer is forty"), cut_chars=None), reply(text("The answer is forty-two.")))
        async with agent_runtime(repo, api) as runtime:
            events = await run_turn(runtime, "the answer?")
    assert any("cut off" in notice.message and "retrying" in notice.message for notice in of_type(events, Notice))
    assert of_type(events, TurnFinished)[0].text == "The answer is forty-two."
    assert "".join(delta.text for delta in of_type(events, TextDelta)) == "The answer is forty-two."
    assert len(api.requests) == 2


async def test_a_tool_call_cut_mid_input_never_runs(repo: Path) -> None:
    (repo / "a.txt").write_text("alpha\n")
    with FakeMessagesAPI() as api:
        call = tool_use("read_file", {"path": "a.txt"})
        api.enqueue(cut_stream(text("Reading."), call, cut_chars=len('{"path": "a.txt"')),  # no closing brace
                    reply(text("Reading."), call), reply(text("It says alpha.")))
        async with agent_runtime(repo, api) as runtime:
            events = await run_turn(runtime, "read a.txt")
    started = of_type(events, ToolCallStarted)
    assert len(started) == 1 and started[0].arguments == {"path": "a.txt"}  # only the complete call ran, once
    assert "alpha" in api.requests[2].tool_result_text()
    assert of_type(events, TurnFinished)[0].text == "It says alpha."


async def test_a_stream_cut_on_every_retry_fails_the_turn_and_takes_the_prompt_back(repo: Path) -> None:
    with FakeMessagesAPI() as api:
        api.enqueue(*[cut_stream(text("Half an ans"))] * 5, reply(text("Fine now.")))
        async with agent_runtime(repo, api, max_retries=4) as runtime:
            failed_turn = await run_turn(runtime, "first prompt")
            after = await run_turn(runtime, "second prompt")
            messages = list(runtime.agent.messages)  # type: ignore[union-attr]
    failed = of_type(failed_turn, TurnFailed)
    assert failed and failed[0].kind == "interrupted" and failed[0].prompt == "first prompt"
    assert not of_type(failed_turn, TurnFinished)
    assert of_type(after, TurnFinished)[0].text == "Fine now."
    assert api.requests[-1].messages == [{"role": "user", "content": [{"type": "text", "text": "second prompt"}]}]
    assert messages == [{"role": "user", "content": [{"type": "text", "text": "second prompt"}]},
                        {"role": "assistant", "content": [{"type": "text", "text": "Fine now."}]}]


async def test_tool_input_that_is_not_json_becomes_an_error_result_for_the_model(repo: Path) -> None:
    with FakeMessagesAPI() as api:
        api.enqueue(reply(tool_use_raw("read_file", '{"path": "a.txt", }')), reply(text("I will fix my JSON.")))
        async with agent_runtime(repo, api) as runtime:
            events = await run_turn(runtime, "read a.txt")
    finished = of_type(events, ToolCallFinished)
    assert len(finished) == 1 and finished[0].is_error and "not valid JSON" in finished[0].result and "nothing was run" in finished[0].result
    result = api.requests[1].tool_results()[0]
    assert result["is_error"] is True and "not valid JSON" in result["content"]
    assert api.requests[1].messages[1]["content"][0]["input"] == {}  # replayed as an object, as the API requires
    assert of_type(events, TurnFinished)[0].text == "I will fix my JSON."


async def test_blank_text_before_a_tool_call_never_reaches_the_next_request(repo: Path) -> None:
    with FakeMessagesAPI() as api:
        api.enqueue(reply(text("\n\n"), tool_use("list_files", {"pattern": "*.md"})), reply(text("  \n")), reply(text("Done.")))
        async with agent_runtime(repo, api) as runtime:
            first = await run_turn(runtime, "list")
            second = await run_turn(runtime, "again")
            session_path = runtime.agent.session.path  # type: ignore[union-attr]
    assert of_type(first, TurnFinished) and of_type(second, TurnFinished)[0].text == "Done."
    assert api.requests[1].messages[1]["content"] == [{"type": "tool_use", "id": api.requests[1].messages[1]["content"][0]["id"],
                                                        "name": "list_files", "input": {"pattern": "*.md"}}]
    assert api.requests[2].messages[3] == {"role": "assistant", "content": [{"type": "text", "text": "(no content)"}]}
    stored = load_messages(session_path)
    assert all(block.get("text", "x").strip() for message in stored for block in message["content"])


async def test_an_oversized_prompt_fails_once_and_later_prompts_work(repo: Path) -> None:
    paste = "x" * 50_000
    with FakeMessagesAPI() as api:
        api.enqueue(http_error(413, message="Request exceeds the maximum size"), reply(text("Hello.")))
        async with agent_runtime(repo, api) as runtime:
            failed_turn = await run_turn(runtime, paste)
            after = await run_turn(runtime, "hi")
            session_path = runtime.agent.session.path  # type: ignore[union-attr]
    assert load_messages(session_path) == api.requests[1].messages + [{"role": "assistant", "content": [{"type": "text", "text": "Hello."}]}]
    failed = of_type(failed_turn, TurnFailed)
    assert failed and failed[0].kind == "context_too_long" and failed[0].prompt == paste
    assert of_type(after, TurnFinished)[0].text == "Hello."
    assert api.requests[1].messages == [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]


async def test_overloaded_after_retries_mid_turn_keeps_the_work_and_closes_the_turn(repo: Path) -> None:
    with FakeMessagesAPI() as api:
        api.enqueue(reply(tool_use("list_files", {"pattern": "*.md"})), *[http_error(529)] * 3, reply(text("Back.")))
        async with agent_runtime(repo, api, max_retries=2) as runtime:
            failed_turn = await run_turn(runtime, "list")
            after = await run_turn(runtime, "go on")
    failed = of_type(failed_turn, TurnFailed)
    assert failed and failed[0].kind == "overloaded" and failed[0].prompt == ""  # answered in part: it stays
    assert of_type(after, TurnFinished)[0].text == "Back."
    roles = [message["role"] for message in api.requests[-1].messages]
    assert roles == ["user", "assistant", "user", "assistant", "user"]
    assert "stopped on an error" in api.requests[-1].messages[3]["content"][0]["text"]
    assert api.requests[-1].messages[4]["content"] == [{"type": "text", "text": "go on"}]


async def test_a_blank_prompt_is_refused_without_a_request(repo: Path) -> None:
    with FakeMessagesAPI() as api:
        async with agent_runtime(repo, api) as runtime:
            events = await run_turn(runtime, "  \n ")
    assert of_type(events, TurnFailed)[0].kind == "empty_prompt" and api.requests == []
