"""Issue 36: the API's server-side web search, offered when the person enabled it (`[web] search`) and the model has
it; its reply blocks kept verbatim and sent back, shown as tool call lines. Through the real SDK and the fake
Messages API, which checks the tool and the blocks as the real API does and answers a search only when offered."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from tests.agent_helpers import agent_runtime, of_type, run_turn
from tests.fake_api import validator
from tests.fake_messages_api import FakeMessagesAPI, cited_text, reply, text, web_search
from tui_agent.core.events import Notice, ToolCallFinished, ToolCallStarted, TurnFailed, TurnFinished

SEARCH_TOOL = {"type": "web_search_20250305", "name": "web_search", "max_uses": 3}
URL, TITLE = "https://www.python.org/downloads/", "Download Python"


def enable(repo: Path, extra: str = "") -> None:
    (repo / ".agent").mkdir(exist_ok=True)
    (repo / ".agent" / "config.toml").write_text(f"[web]\nsearch = true\nsearch_max_uses = 3\n{extra}")


def searched_reply() -> Any:
    call, result = web_search("latest python release", (TITLE, URL), ("What's new", "https://docs.python.org/3/whatsnew/"))
    return reply(call, result, cited_text("Python 3.14 is the latest.", URL, TITLE, "Python 3.14.0"))


async def test_a_search_is_offered_kept_verbatim_and_shown_as_a_tool_call(repo: Path) -> None:
    enable(repo)
    with FakeMessagesAPI() as api:  # strict: a block sent back changed would fail the test here
        api.enqueue(searched_reply(), reply(text("Nothing more.")))
        async with agent_runtime(repo, api, model="claude-sonnet-4-5") as runtime:
            first = await run_turn(runtime, "what is the latest python?")
            await run_turn(runtime, "thanks")
    assert api.requests[0].body["tools"][0] == SEARCH_TOOL
    assert api.requests[1].body["tools"] == api.requests[0].body["tools"]  # the cached prefix stays put
    started, finished = of_type(first, ToolCallStarted), of_type(first, ToolCallFinished)
    assert [(call.name, call.arguments) for call in started] == [("web_search", {"query": "latest python release"})]
    assert finished[0].call_id == started[0].call_id and not finished[0].is_error
    assert finished[0].result.startswith("2 results") and URL in finished[0].result
    assert of_type(first, TurnFinished)[0].text == "Python 3.14 is the latest."
    sent = api.requests[1].messages[1]["content"]
    assert [block["type"] for block in sent] == ["server_tool_use", "web_search_tool_result", "text"]
    assert sent[0]["id"].startswith("srvtoolu_") and sent[1]["tool_use_id"] == sent[0]["id"]
    assert sent[1]["content"][0]["encrypted_content"] and sent[2]["citations"][0]["encrypted_index"]
    assert "caller" not in sent[0] and "caller" not in sent[1]  # nothing the API did not send


async def test_off_by_default_and_not_offered_to_a_model_without_it(repo: Path) -> None:
    with FakeMessagesAPI() as api:
        api.enqueue(searched_reply())  # a search the request did not offer: the fake refuses, as the API never sends one
        async with agent_runtime(repo, api, model="claude-sonnet-4-5") as runtime:
            events = await run_turn(runtime, "search?")
    assert all(tool.get("type") != "web_search_20250305" for tool in api.requests[0].body["tools"])
    assert "offers no web_search tool" in of_type(events, TurnFailed)[0].message
    enable(repo)
    with FakeMessagesAPI() as api:
        api.enqueue(reply(text("no search here")))
        async with agent_runtime(repo, api, model="claude-3-haiku-20240307") as runtime:
            events = await run_turn(runtime, "search?")
    assert all(tool.get("type") != "web_search_20250305" for tool in api.requests[0].body["tools"])
    assert any("has no server-side web search" in event.message for event in of_type(events, Notice))


def test_headless_shows_the_search_as_a_tool_call(repo: Path, api: FakeMessagesAPI,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from tui_agent.cli import main

    enable(repo)
    api.enqueue(searched_reply())
    assert main(["--project", str(repo), "-p", "latest python?", "--model", "claude-opus-4-1",
                 "--output-format", "stream-json"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]
    result = lines[-1]
    assert [call["name"] for call in result["tool_calls"]] == ["web_search"] and not result["tool_calls"][0]["is_error"]
    assert result["result"] == "Python 3.14 is the latest."


def test_the_fake_api_checks_search_tools_and_blocks_as_the_api_does() -> None:
    call, result = web_search("q", (TITLE, URL))
    from tests.fake_api.sse import block_json

    good = {"model": "claude-sonnet-4-5", "max_tokens": 10, "tools": [SEARCH_TOOL],
            "messages": [{"role": "user", "content": "q"},
                         {"role": "assistant", "content": [block_json(call), block_json(result), {"type": "text", "text": "a"}]},
                         {"role": "user", "content": "more"}]}
    assert validator.problems(good) == []
    tampered = copy.deepcopy(good)
    tampered["messages"][1]["content"][1]["content"][0]["url"] = "https://elsewhere.example/"
    assert any("encrypted_content: Invalid encrypted content" in p for p in validator.problems(tampered))
    orphan = copy.deepcopy(good)
    del orphan["messages"][1]["content"][0]
    assert any("without a preceding `server_tool_use`" in p for p in validator.problems(orphan))
    for tool, words in (({**SEARCH_TOOL, "name": "search"}, "name: Input should be 'web_search'"),
                        ({**SEARCH_TOOL, "max_uses": 0}, "max_uses: Input should be greater than or equal to 1"),
                        ({**SEARCH_TOOL, "type": "web_search_2099"}, "does not match any of the expected tags")):
        assert any(words in p for p in validator.problems({**good, "tools": [tool]})), tool
    old = {**good, "model": "claude-3-haiku-20240307"}
    assert any("does not support tool types: web_search_20250305" in p for p in validator.problems(old))


async def test_the_tui_shows_the_search_as_a_tool_entry(repo: Path, api: FakeMessagesAPI) -> None:
    from tests.ui_support import SIZE, make_app, ready, send, turn_answered, wait_until

    enable(repo)
    api.enqueue(searched_reply())
    app = make_app(repo, model="claude-sonnet-4-5")
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, app, "latest python?")
        await wait_until(pilot, lambda: turn_answered(app, "Python 3.14 is the latest."), timeout=30,
                         message="the turn to finish")
        tools = [entry for entry in app.conversation.entries if entry.kind == "tool"]
        assert [(entry.tool, entry.arguments) for entry in tools] == [("web_search", {"query": "latest python release"})]
        assert tools[0].result is not None and URL in tools[0].result
