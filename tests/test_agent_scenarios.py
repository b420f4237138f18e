"""The issue's scenarios end to end: real SDK, fake Messages API server, real git repos, real sandbox and catalog."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.agent_helpers import FLAKY_TOOL, GOOD_TOOL, agent_runtime, of_type, run_turn, write_traces
from tests.fake_messages_api import FakeMessagesAPI, RecordedRequest, Response, http_error, mid_stream_error, reply, text, tool_use
from tests.gitrepo import git, user_state
from tui_agent.core.events import Notice, TextDelta, ToolAuthored, ToolCallFinished, TurnFailed, TurnFinished
from tui_agent.core.runtime_state import catalog_of

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
    # the catalog index change is announced in the conversation; the system prompt stays as cached
    assert "new tool find_flaky_recipe_runs" in api.requests[after].all_text()
    assert api.requests[after].system_text == api.requests[0].system_text
    direct = [e for e in of_type(events, ToolCallFinished) if e.name == "find_flaky_recipe_runs"]
    assert len(direct) == 1 and not direct[0].is_error and direct[0].authored
    authored = of_type(events, ToolAuthored)
    assert authored and authored[0].name == "find_flaky_recipe_runs" and authored[0].commit
    log = git(dirty_repo, "log", "--format=%H %s", "--", ".agent/tools/find_flaky_recipe_runs.py")
    assert authored[0].commit in log and "find_flaky_recipe_runs" in log
    assert git(dirty_repo, "status", "--porcelain", "--", ".agent/tools").strip() == ""
    assert user_state(dirty_repo) == before  # the user's staged, unstaged and untracked work is untouched


BROKEN_TOOL = '''"""Count lines."""


def count_lines(path: str) -> int:
    """Count the lines of a file.

    Args:
        path: The file.
    """
    return len(open(path).read().splitlines()
'''


async def test_scenario_2_a_new_process_first_request_lists_the_tool(repo: Path) -> None:
    write_traces(repo)
    with FakeMessagesAPI() as api:
        api.enqueue(reply(tool_use("create_tool", {"name": "find_flaky_recipe_runs", "source": FLAKY_TOOL})), reply(text("made it")))
        async with agent_runtime(repo, api) as runtime:
            events = await run_turn(runtime, "make the tool")
        assert of_type(events, TurnFinished) and of_type(events, ToolAuthored)
        first_of_new_process = len(api.requests)
        api.enqueue(reply(tool_use("find_flaky_recipe_runs", {"name": "deploy"})), reply(text("r1 is flaky")))
        env = {**os.environ, "ANTHROPIC_BASE_URL": api.base_url, "ANTHROPIC_API_KEY": "test-key"}
        done = subprocess.run([sys.executable, "-m", "tui_agent.cli", "--project", str(repo), "-p", "flaky deploy runs?"],
                              capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    request = api.requests[first_of_new_process]
    assert request.messages == [{"role": "user", "content": [{"type": "text", "text": "flaky deploy runs?"}]}]
    assert "find_flaky_recipe_runs" in request.tool_names and "find_flaky_recipe_runs" in request.system_text
    assert '[tool] find_flaky_recipe_runs {"name": "deploy"}' in done.stderr and "r1 is flaky" in done.stdout
    assert '"r1"' in api.requests[-1].tool_result_text()


async def test_scenario_3_a_broken_create_tool_gets_an_error_and_the_catalog_is_unchanged(repo: Path) -> None:
    with FakeMessagesAPI() as api:
        api.enqueue(reply(tool_use("create_tool", {"name": "count_lines", "source": GOOD_TOOL})), reply(text("ok")))
        api.enqueue(reply(tool_use("create_tool", {"name": "count_lines", "source": BROKEN_TOOL})),
                    reply(tool_use("create_tool", {"name": "count_lines", "source": BROKEN_TOOL.replace("def count_lines", "def count_lines_x")})))
        api.respond_with(lambda request: reply(text("fixed later")))
        async with agent_runtime(repo, api) as runtime:
            await run_turn(runtime, "make count_lines")
            catalog = catalog_of(runtime)
            head_before = git(repo, "rev-parse", "HEAD")
            records_before = [(r.name, r.status, r.spec) for r in catalog.tools()]
            events = await run_turn(runtime, "improve count_lines")
            records_after = [(r.name, r.status, r.spec) for r in catalog.tools()]
            called = await catalog.call_tool("count_lines", {"path": "README.md"})
    failures = [e for e in of_type(events, ToolCallFinished) if e.name == "create_tool"]
    assert len(failures) == 2 and all(f.is_error for f in failures)
    first_error = api.requests[3].tool_results()[0]
    assert first_error["is_error"] is True and "the catalog is unchanged" in first_error["content"]
    details = json.loads(first_error["content"].split("\n", 1)[1])
    assert details["stage"] == "parse" and details["line"] is not None
    assert not of_type(events, ToolAuthored)
    assert records_after == records_before and git(repo, "rev-parse", "HEAD") == head_before
    assert (repo / ".agent/tools/count_lines.py").read_text() == GOOD_TOOL
    assert called.ok and called.value == 1


async def test_scenario_4_429_then_success_401_message_mid_stream_error(repo: Path) -> None:
    with FakeMessagesAPI() as api:
        api.enqueue(http_error(429), reply(text("after the rate limit")))
        api.enqueue(http_error(401, message="invalid x-api-key"))
        api.enqueue(mid_stream_error(text("Partial answer")), reply(text("Partial answer, then the whole of it.")))
        async with agent_runtime(repo, api) as runtime:
            rate_limited = await run_turn(runtime, "one")
            unauthorized = await run_turn(runtime, "two")
            interrupted = await run_turn(runtime, "three")
    assert any("429" in n.message and "retrying" in n.message for n in of_type(rate_limited, Notice))
    assert of_type(rate_limited, TurnFinished)[0].text == "after the rate limit"
    failed = of_type(unauthorized, TurnFailed)
    assert failed and failed[0].kind == "auth" and "ANTHROPIC_API_KEY" in failed[0].message and "ANTHROPIC_BASE_URL" in failed[0].message
    assert "".join(e.text for e in of_type(interrupted, TextDelta)) == "Partial answer, then the whole of it."
    assert of_type(interrupted, TurnFinished)[0].text == "Partial answer, then the whole of it."
    # the conversation went on after each failure; the 401's prompt was taken back (given to the front end to
    # restore), not sent again merged into the next prompt
    assert of_type(unauthorized, TurnFailed)[0].prompt == "two"
    last_messages = api.requests[-1].messages
    assert [m["role"] for m in last_messages] == ["user", "assistant", "user"]
    assert [b["text"] for b in last_messages[2]["content"]] == ["three"]


async def test_scenario_5_a_path_outside_the_project_is_refused(repo: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("password")
    os.symlink(tmp_path, repo / "escape")
    with FakeMessagesAPI() as api:
        api.enqueue(reply(tool_use("read_file", {"path": "../secret.txt"}), tool_use("read_file", {"path": "escape/secret.txt"}),
                          tool_use("write_file", {"path": str(secret), "content": "owned"})), reply(text("refused, as expected")))
        async with agent_runtime(repo, api) as runtime:
            events = await run_turn(runtime, "read the secret")
    results = api.requests[1].tool_results()
    assert len(results) == 3 and all(r["is_error"] for r in results)
    assert all("outside the project" in r["content"] and "password" not in r["content"] for r in results)
    assert "symlink" in results[1]["content"]
    assert secret.read_text() == "password" and of_type(events, TurnFinished)
