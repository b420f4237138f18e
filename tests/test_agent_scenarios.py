"""The issue's scenarios end to end: real SDK, fake Messages API server, real git repos, real sandbox and catalog."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.agent_helpers import FLAKY_TOOL, agent_runtime, of_type, run_turn, write_traces
from tests.fake_messages_api import FakeMessagesAPI, RecordedRequest, Response, http_error, mid_stream_error, reply, text, tool_use
from tests.gitrepo import git, user_state
from tui_agent.core.events import TextDelta, ToolAuthored, ToolCallFinished, TurnFailed, TurnFinished

FOUR_CALLS = [
    ("list_files", {"pattern": "traces/*.jsonl"}),
    ("grep", {"pattern": "deploy", "path": "traces"}),
    ("read_file", {"path": "traces/mon.jsonl"}),
    ("grep", {"pattern": "fail", "path": "traces"}),
]


def scenario_one(request: RecordedRequest) -> Response:
    """After create_tool, the model sees its tool listed and calls it directly; then reports the result."""
    results = request.tool_results()
    if results and "created tool find_flaky_recipe_runs" in request.tool_result_text():
        assert "find_flaky_recipe_runs" in request.tool_names
        return reply(tool_use("find_flaky_recipe_runs", {"name": "deploy"}))
    if results and request.messages[-2]["content"][-1].get("name") == "find_flaky_recipe_runs":
        return reply(text(f"Flaky deploy runs: {request.tool_result_text()}"))
    return http_error(400, message=f"unexpected request: {request.messages[-1]}")


async def test_scenario_1_repeated_calls_become_a_tool_called_on_the_next_request(dirty_repo: Path) -> None:
    write_traces(dirty_repo)
    before = user_state(dirty_repo)
    with FakeMessagesAPI() as api:
        for _ in range(2):
            for name, args in FOUR_CALLS:
                api.enqueue(reply(tool_use(name, args)))
        api.enqueue(reply(text("I keep repeating these four calls; making a tool."), tool_use("create_tool", {"name": "find_flaky_recipe_runs", "source": FLAKY_TOOL})))
        api.respond_with(scenario_one)
        async with agent_runtime(dirty_repo, api) as runtime:
            events = await run_turn(runtime, "which deploy runs are flaky? check twice")
    finished = of_type(events, TurnFinished)
    assert finished and finished[0].text == 'Flaky deploy runs: [\n "r1"\n]', [e for e in events if isinstance(e, (TurnFailed, ToolCallFinished))]
    # before create_tool the tool was not offered; the request right after lists it with its generated schema
    after = next(i for i, r in enumerate(api.requests) if r.tool_results() and "created tool" in r.tool_result_text())
    assert after == 9 and len(api.requests) == 11  # 8 repeated calls, create_tool, the direct call, the answer
    assert "find_flaky_recipe_runs" not in api.requests[after - 1].tool_names
    listed = api.requests[after].tool("find_flaky_recipe_runs")
    assert listed is not None and listed["input_schema"]["properties"]["name"]["type"] == "string"
    assert listed["input_schema"]["required"] == ["name"]
    assert "find_flaky_recipe_runs" in api.requests[after].system_text  # and in the catalog index
    direct = [e for e in of_type(events, ToolCallFinished) if e.name == "find_flaky_recipe_runs"]
    assert len(direct) == 1 and not direct[0].is_error and direct[0].authored
    authored = of_type(events, ToolAuthored)
    assert authored and authored[0].name == "find_flaky_recipe_runs" and authored[0].commit
    log = git(dirty_repo, "log", "--format=%H %s", "--", ".agent/tools/find_flaky_recipe_runs.py")
    assert authored[0].commit in log and "find_flaky_recipe_runs" in log
    assert git(dirty_repo, "status", "--porcelain", "--", ".agent/tools").strip() == ""
    assert user_state(dirty_repo) == before  # the user's staged, unstaged and untracked work is untouched
