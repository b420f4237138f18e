"""/compact in the core: one summarizing request through the real SDK to the fake API, the summary replacing the conversation."""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.agent_helpers import agent_runtime, of_type, run_turn
from tests.fake_messages_api import FakeMessagesAPI, http_error, reply, text, thinking, tool_use
from tui_agent.core.agent.loop import Agent
from tui_agent.core.agent.conversation_summary import COMPACTED, SUMMARY_HEADER, SUMMARY_INSTRUCTION, CompactError, compact_agent
from tui_agent.core.agent.sessions import load_messages, load_usage, read_events
from tui_agent.core.events import Notice, TurnFinished
from tui_agent.core.runtime_state import agent_of

ADAPTIVE_MODEL = "claude-opus-4-6"  # thinks: the fake API checks the thinking rules on every request


async def test_compact_sends_the_history_with_the_instruction_and_the_conversation_continues_from_the_summary(repo: Path) -> None:
    with FakeMessagesAPI() as api:
        api.enqueue(reply(thinking("Read it first."), text("Reading."), tool_use("read_file", {"path": "README.md"})),
                    reply(thinking("Done."), text("The README greets you.")),
                    reply(thinking("Summarizing."), text("The person asked what README.md says; it was read: it greets."),
                          usage={"input_tokens": 900, "output_tokens": 40}),
                    reply(text("Continuing.")),
                    reply(text("Resumed.")))
        async with agent_runtime(repo, api, model=ADAPTIVE_MODEL) as runtime:
            agent = agent_of(runtime)
            assert agent is not None
            await run_turn(runtime, "what does the README say?")
            cost_before = agent.usage.output_tokens
            summary = await compact_agent(agent, "focus on the README")
            sent = api.requests[2]
            # the history as a turn sends it (thinking blocks, the tool call and its result), then the instruction
            assert [m["role"] for m in sent.messages] == ["user", "assistant", "user", "assistant", "user"]
            assert sent.messages[:3] == api.requests[1].messages and sent.messages[3]["content"][0]["type"] == "thinking"
            assert sent.messages[2]["content"][0]["type"] == "tool_result" and sent.messages[-1]["content"][0]["type"] == "text"
            instruction = sent.messages[-1]["content"][-1]["text"]
            assert instruction.startswith(SUMMARY_INSTRUCTION) and "focus on the README" in instruction
            assert "tool_choice" not in sent.body and sent.body["thinking"] == {"type": "adaptive"}
            assert [tool["name"] for tool in sent.tools] == [tool["name"] for tool in api.requests[1].tools]
            # the conversation is now the summary, the usage counted, the session records it
            assert summary.text.startswith("The person asked")
            assert agent.messages == [{"role": "user", "content": [{"type": "text", "text": SUMMARY_HEADER + summary.text}]}]
            assert agent.usage.output_tokens == cost_before + 40
            assert load_messages(agent.session.path) == agent.messages
            assert load_usage(agent.session.path)["output_tokens"] >= 40
            notices = [event.message for event in read_events(agent.session.path).events if isinstance(event, Notice)]
            assert notices[-1] == f"{COMPACTED}:\n\n{summary.text}"  # a resumed transcript shows where and what
            events = await run_turn(runtime, "go on")
            assert of_type(events, TurnFinished)[-1].text == "Continuing."
            after = api.requests[3].messages
            assert [m["role"] for m in after] == ["user"]
            assert after[0]["content"][0]["text"].startswith(SUMMARY_HEADER) and after[0]["content"][1]["text"] == "go on"
        async with agent_runtime(repo, api, model=ADAPTIVE_MODEL, continue_latest=True) as runtime:
            assert agent_of(runtime) is not None
            resumed = agent_of(runtime).messages
            assert resumed[0]["content"][0]["text"].startswith(SUMMARY_HEADER) and resumed[-1]["content"][0]["text"] == "Continuing."
            await run_turn(runtime, "still there?")
        assert api.requests[4].messages[0]["content"][0]["text"].startswith(SUMMARY_HEADER)


@asynccontextmanager
async def said_hello(repo: Path, api: FakeMessagesAPI, summary_reply: Any) -> AsyncIterator[tuple[Agent, list[Any]]]:
    """A conversation of one turn ("hi", "Hello."), the next request (the summary's) answered with `summary_reply`:
    the agent, and a copy of its messages before any summary."""
    api.enqueue(reply(text("Hello.")), summary_reply)
    async with agent_runtime(repo, api) as runtime:
        agent = agent_of(runtime)
        assert agent is not None
        await run_turn(runtime, "hi")
        yield agent, copy.deepcopy(agent.messages)


async def test_a_failed_summary_request_leaves_the_conversation_and_the_session_unchanged(repo: Path, api: FakeMessagesAPI) -> None:
    too_long = http_error(400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum")
    async with said_hello(repo, api, too_long) as (agent, before):
        with pytest.raises(CompactError, match="too long"):
            await compact_agent(agent)
        assert agent.messages == before and load_messages(agent.session.path) == before
        assert len(api.requests) == 2


async def test_a_cancelled_summary_leaves_the_conversation_unchanged(repo: Path, api: FakeMessagesAPI) -> None:
    async with said_hello(repo, api, reply(text("A summary that comes too late."), delay_s=5)) as (agent, before):
        task = asyncio.create_task(compact_agent(agent))
        for _ in range(500):
            if len(api.requests) == 2:
                break
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert agent.messages == before and load_messages(agent.session.path) == before


async def test_a_reply_without_text_is_not_taken_as_a_summary(repo: Path, api: FakeMessagesAPI) -> None:
    async with said_hello(repo, api, reply(tool_use("list_files", {"pattern": "*"}))) as (agent, before):
        with pytest.raises(CompactError, match="called a tool"):
            await compact_agent(agent)
        assert agent.messages == before


async def test_an_empty_conversation_has_nothing_to_compact(repo: Path, api: FakeMessagesAPI) -> None:
    async with agent_runtime(repo, api) as runtime:
        assert agent_of(runtime) is not None
        with pytest.raises(CompactError, match="empty"):
            await compact_agent(agent_of(runtime))
    assert api.requests == []


def test_the_instruction_joins_a_last_user_message_or_comes_as_its_own() -> None:
    from tui_agent.core.agent.conversation_summary import summary_request

    ended = [{"role": "user", "content": [{"type": "text", "text": "hi"}]}, {"role": "assistant", "content": [{"type": "text", "text": "Hello."}]}]
    request = summary_request(ended, "  the parser ")
    assert [m["role"] for m in request] == ["user", "assistant", "user"] and request[:2] == ended
    assert request[-1]["content"][0]["text"].endswith("focus on: the parser")
    cancelled = [*ended[:1], {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "list_files", "input": {}}]},
                 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "cancelled", "is_error": True}]}]
    request = summary_request(cancelled)
    assert len(request) == 3 and [block["type"] for block in request[-1]["content"]] == ["tool_result", "text"]
    assert request[-1]["content"][-1]["text"] == SUMMARY_INSTRUCTION and cancelled[-1]["content"][-1]["type"] == "tool_result"


async def test_a_conversation_too_long_to_summarize_whole_has_its_old_tool_results_shortened_for_the_summary(repo: Path, api: FakeMessagesAPI) -> None:
    from tui_agent.core.agent.context_limit import SHORTENED_MARK

    (repo / "big.txt").write_text("".join(f"line {n} " + "x" * 70 + "\n" for n in range(400)))
    too_long = http_error(400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum")
    api.enqueue(reply(tool_use("read_file", {"path": "big.txt"})), reply(text("Read.")), reply(text("Noted.")), reply(text("Sure.")),
                too_long, too_long, too_long, reply(text("big.txt: 400 lines of x, read.")))
    async with agent_runtime(repo, api) as runtime:
        agent = agent_of(runtime)
        assert agent is not None
        await run_turn(runtime, "read big.txt")
        await run_turn(runtime, "and then?")
        await run_turn(runtime, "ok")
        before = copy.deepcopy(agent.messages)
        with pytest.raises(CompactError, match="even with old tool results shortened"):
            await compact_agent(agent)  # too long, shortened, still too long, nothing more to shorten
        assert agent.messages == before  # the shortening was done on a copy
        summary = await compact_agent(agent)
        first, second = api.requests[6].body["messages"], api.requests[7].body["messages"]
        assert SHORTENED_MARK not in json.dumps(first) and SHORTENED_MARK in json.dumps(second)
        assert summary.text == "big.txt: 400 lines of x, read." and agent.messages == summary.replacement
        assert any("shortened 1 old tool results" in notice.message for notice in summary.notices)
