"""The prompt cache does its job: over a scripted turn the cache reads at least 90% of the ideal, with at most 4 breakpoints."""

from __future__ import annotations

from pathlib import Path

from tests.agent_helpers import GOOD_TOOL, agent_runtime, run_turn
from tests.cache_scenario import run_turn_for_cache
from tests.fake_messages_api import FakeMessagesAPI, http_error, reply, text, tool_use
from tui_agent.core.runtime_state import agent_of


async def test_a_turn_with_an_authored_tool_reads_90_percent_of_the_ideal_from_the_cache(repo: Path) -> None:
    figures, sent = await run_turn_for_cache(repo, requests=12, tools=40, top_k=10)
    assert figures.finished and figures.requests == 12 and figures.tool_errors == 0
    assert figures.ideal > 12_000  # the scenario shares a lot: tools, system and a growing conversation
    assert figures.ratio >= 0.9, figures
    assert all(request.breakpoints <= 4 for request in sent)
    # the tools array never reshuffles: each request's tools start with the previous request's (one appended: sum_pair)
    for before, after in zip(sent, sent[1:], strict=False):
        assert [t["name"] for t in after.tools][: len(before.tools)] == [t["name"] for t in before.tools]
        assert after.system_text == before.system_text
    assert "sum_pair" not in sent[6].tool_names and sent[7].tool_names[-1] == "sum_pair"
    assert "metric_15" not in sent[0].tool_names  # outside the top K, called through call_tool


async def test_changes_are_announced_in_the_conversation_and_the_prefix_stays(repo: Path) -> None:
    with FakeMessagesAPI() as api:
        api.enqueue(reply(text("one")), reply(text("two")), reply(text("three")))
        async with agent_runtime(repo, api) as runtime:
            assert agent_of(runtime) is not None
            await run_turn(runtime, "first")
            agent_of(runtime).permissions.set_mode("auto")
            (repo / ".agent/tools/count_lines.py").write_text(GOOD_TOOL)  # added by a person
            await run_turn(runtime, "second")
            await run_turn(runtime, "third")
    first, second, third = api.requests
    assert second.system_text == first.system_text and third.system_text == first.system_text  # mode `ask` stays there
    note = second.messages[2]["content"][1]["text"]
    assert second.messages[2]["content"][0]["text"] == "second"
    assert "[catalog update]" in note and "new tool count_lines: Count the lines of a file." in note
    assert "The permission mode is now `auto`" in note
    assert second.tool_names[-1] == "count_lines" and second.tool_names[:-1] == first.tool_names
    assert "[catalog update]" not in third.messages[4]["content"][0]["text"] and len(third.messages[4]["content"]) == 1
    assert third.messages[2] == second.messages[2]  # the note stays where it was: the cached prefix holds
    # the cache read everything the second request shared with the first, and the third everything it shared
    assert [usage.read for usage in api.cache_log[1:]] == [usage.ideal for usage in api.cache_log[1:]]


async def test_a_step_adding_more_than_20_blocks_still_reads_the_whole_earlier_prefix(repo: Path) -> None:
    calls = [tool_use("list_files", {"pattern": f"*.{i}"}) for i in range(12)]  # 12 calls + 12 results: 24 new blocks
    with FakeMessagesAPI() as api:
        api.enqueue(reply(text("Looking everywhere."), *calls), reply(text("Nothing there.")))
        async with agent_runtime(repo, api) as runtime:
            await run_turn(runtime, "find the odd files")
    second = api.cache_log[1]
    assert len(api.requests[1].messages[1]["content"]) + len(api.requests[1].messages[2]["content"]) > 20
    assert second.ideal > 1024 and second.read == second.ideal  # read at the previous request's end, not by lookback


async def test_a_note_taken_back_with_a_failed_prompt_is_sent_again_with_the_next(repo: Path) -> None:
    with FakeMessagesAPI() as api:
        api.enqueue(reply(text("one")), http_error(400, message="scripted refusal"), reply(text("three")))
        async with agent_runtime(repo, api) as runtime:
            await run_turn(runtime, "first")
            (repo / ".agent/tools/count_lines.py").write_text(GOOD_TOOL)
            await run_turn(runtime, "second")
            await run_turn(runtime, "third")
    assert "new tool count_lines" in api.requests[1].all_text()
    last = api.requests[2].messages[2]["content"]
    assert last[0]["text"] == "third" and "new tool count_lines" in last[1]["text"]
