"""The loop's guards and recovery: repeated failures, max turns, cancellation, context shortening, caching, approvals."""

from __future__ import annotations

import asyncio
import copy
import time
from pathlib import Path

from tests.agent_helpers import GOOD_TOOL, agent_runtime, of_type, run_turn
from tests.fake_messages_api import FakeMessagesAPI, http_error, reply, text, tool_use
from tests.gitrepo import git
from tui_agent.core.agent.loop import CANCELLED_RESULT
from tui_agent.core.agent.permissions import ApprovalRequest, deny_all
from tui_agent.core.agent.sessions import load_messages
from tui_agent.core.events import ApprovalDenied, Notice, TextDelta, ToolAuthored, ToolCallFinished, ToolCallStarted, TurnFailed, TurnFinished
from tui_agent.core.runtime_state import agent_of


async def test_the_same_failing_call_three_times_stops_the_loop(repo: Path) -> None:
    with FakeMessagesAPI() as api:
        api.enqueue(*[reply(tool_use("read_file", {"path": "missing.txt"}))] * 3, reply(text("next turn works")))
        async with agent_runtime(repo, api) as runtime:
            events = await run_turn(runtime, "read it")
            after = await run_turn(runtime, "go on")
    failed = of_type(events, TurnFailed)
    assert failed and failed[0].kind == "repeated_failure"
    assert "read_file failed 3 times with the same input" in failed[0].message and "does not exist" in failed[0].message
    assert len(api.requests) == 4 and of_type(after, TurnFinished)
    assert api.requests[3].messages[-1]["content"][0]["type"] == "tool_result"  # the third failure was answered too


async def test_max_turns_per_prompt(repo: Path) -> None:
    (repo / ".agent").mkdir()
    (repo / ".agent/config.toml").write_text("[agent]\nmax_turns = 3\n")
    with FakeMessagesAPI() as api:
        api.respond_with(lambda request: reply(tool_use("list_files", {"pattern": f"*{len(request.messages)}"})))
        async with agent_runtime(repo, api) as runtime:
            events = await run_turn(runtime, "loop forever")
    failed = of_type(events, TurnFailed)
    assert failed and failed[0].kind == "max_turns" and "max_turns" in failed[0].message and len(api.requests) == 3


async def test_tool_errors_come_back_as_is_error_results_with_a_trimmed_traceback(repo: Path) -> None:
    source = GOOD_TOOL.replace("return len(open(path).read().splitlines())", "return 1 // (len(path) - len(path))")
    with FakeMessagesAPI() as api:
        api.enqueue(reply(tool_use("create_tool", {"name": "count_lines", "source": source.replace('assert count_lines("README.md") >= 1', "pass")})),
                    reply(tool_use("count_lines", {"path": "README.md"})), reply(text("it divides by zero")))
        async with agent_runtime(repo, api) as runtime:
            events = await run_turn(runtime, "count")
    call = [e for e in of_type(events, ToolCallFinished) if e.name == "count_lines"][0]
    assert call.is_error and call.authored and "ZeroDivisionError" in call.result
    result = api.requests[2].tool_results()[0]
    assert result["is_error"] is True and "count_lines" in result["content"]
    assert "tui_agent" not in result["content"]  # trimmed to the tool's own frames


async def test_cancelling_a_turn_kills_the_run_and_answers_every_tool_use(repo: Path) -> None:
    with FakeMessagesAPI() as api:
        api.enqueue(reply(tool_use("run_shell", {"command": "sleep 30"}), tool_use("read_file", {"path": "README.md"})))
        api.enqueue(reply(text("fine, moving on")))
        async with agent_runtime(repo, api) as runtime:
            agent = agent_of(runtime)
            assert agent is not None
            seen: list[object] = []

            async def consume() -> None:
                async for event in agent.run_turn("sleep"):
                    seen.append(event)

            task = asyncio.create_task(consume())
            while not of_type(seen, ToolCallStarted):
                await asyncio.sleep(0.02)
            await asyncio.sleep(0.3)
            started = time.monotonic()
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass
            cancelled_in = time.monotonic() - started
            last = copy.deepcopy(agent.messages[-1])
            after = await run_turn(runtime, "what happened?")
    assert cancelled_in < 5
    assert last["role"] == "user" and [b["content"] for b in last["content"]] == [CANCELLED_RESULT, CANCELLED_RESULT]
    assert of_type(after, TurnFinished)
    sent = api.requests[1].messages
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert [b["type"] for b in sent[2]["content"]] == ["tool_result", "tool_result", "text"]
    assert load_messages(agent.session.path) == sent + [{"role": "assistant", "content": [{"type": "text", "text": "fine, moving on"}]}]


async def test_near_the_context_limit_old_tool_results_are_shortened(repo: Path) -> None:
    (repo / "big.txt").write_text("".join(f"line {i} with some padding text\n" for i in range(400)))
    with FakeMessagesAPI() as api:
        api.enqueue(reply(tool_use("read_file", {"path": "big.txt"})), reply(text("read it")))
        api.enqueue(http_error(400, message="prompt is too long: 210000 tokens > 200000 maximum"), reply(text("still here")))
        async with agent_runtime(repo, api) as runtime:
            await run_turn(runtime, "read big.txt")
            events = await run_turn(runtime, "and now?")
    assert any("shortened 1 old tool results" in n.message for n in of_type(events, Notice))
    assert of_type(events, TurnFinished)[0].text == "still here"
    full, shortened = api.requests[1].tool_result_text(), api.requests[3].messages[2]["content"][0]["content"]
    assert len(full) > 10_000 and len(shortened) < 600 and "shortened to save context" in shortened


async def test_prompt_caching_marks_the_system_and_the_last_tool(repo: Path) -> None:
    with FakeMessagesAPI() as api:
        api.enqueue(reply(text("hi")))
        async with agent_runtime(repo, api) as runtime:
            events = await run_turn(runtime, "hello")
            usage = agent_of(runtime).usage if agent_of(runtime) else None
    body = api.requests[0].body
    assert body["system"][-1]["cache_control"] == {"type": "ephemeral"}
    assert body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert sum("cache_control" in tool for tool in body["tools"]) == 1
    assert body["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}  # the rolling breakpoint
    # the first request writes the whole prompt to the cache (at 1.25x the input price): nothing is left uncached
    assert usage is not None and usage.requests == 1 and usage.cache_write_tokens == api.cache_log[0].write > 1024
    assert usage.input_tokens == api.cache_log[0].uncached and usage.cost_usd > 0
    assert "test_*" in api.requests[0].system_text and "near-duplicate" in api.requests[0].system_text
    assert of_type(events, TurnFinished)


async def test_denied_approvals_are_reported_to_the_model(repo: Path) -> None:
    asked: list[ApprovalRequest] = []

    async def refuse(request: ApprovalRequest) -> bool:
        asked.append(request)
        return False

    with FakeMessagesAPI() as api:
        api.enqueue(reply(tool_use("run_shell", {"command": "rm -rf build"}), tool_use("write_file", {"path": "app.py", "content": "x"})),
                    reply(text("ok, I will not")))
        async with agent_runtime(repo, api, approve=refuse) as runtime:
            events = await run_turn(runtime, "clean up")
    assert [(a.kind, a.detail) for a in asked][0] == ("shell", "rm -rf build")
    assert asked[1].kind == "write" and "+x" in asked[1].detail
    assert len(of_type(events, ApprovalDenied)) == 2
    results = api.requests[1].tool_results()
    assert all(r["is_error"] and "denied" in r["content"] for r in results)
    assert (repo / "app.py").read_text() == "print('hello')\n"


async def test_read_only_mode_refuses_shell_and_writes_without_asking(repo: Path) -> None:
    with FakeMessagesAPI() as api:
        api.enqueue(reply(tool_use("run_shell", {"command": "touch x"}), tool_use("edit_file", {"path": "app.py", "old": "hello", "new": "bye"})),
                    reply(text("read-only")))
        async with agent_runtime(repo, api, approve=deny_all, permission_mode="read-only") as runtime:
            await run_turn(runtime, "try")
    results = api.requests[1].tool_results()
    assert all(r["is_error"] and "read-only" in r["content"] for r in results)
    assert not (repo / "x").exists()


async def test_a_tool_file_edited_by_someone_else_is_picked_up_at_the_next_request(repo: Path) -> None:
    with FakeMessagesAPI() as api:
        api.enqueue(reply(text("nothing yet")), reply(tool_use("count_lines", {"path": "README.md"})), reply(text("done")))
        async with agent_runtime(repo, api) as runtime:
            await run_turn(runtime, "first")
            (repo / ".agent/tools/count_lines.py").write_text(GOOD_TOOL)  # a person's edit, no watcher running
            events = await run_turn(runtime, "second")
    assert "count_lines" not in api.requests[0].tool_names and "count_lines" in api.requests[1].tool_names
    call = [e for e in of_type(events, ToolCallFinished) if e.name == "count_lines"][0]
    assert not call.is_error and call.result == "1"


RECIPE = 'description = "Explain a file"\n[trigger]\non = "command"\n[action]\nprompt = "Explain {args}"\n'


async def test_create_recipe_is_validated_and_committed(repo: Path) -> None:
    with FakeMessagesAPI() as api:
        api.enqueue(reply(tool_use("create_recipe", {"name": "explain", "source": "not = [valid"}),
                          tool_use("create_recipe", {"name": "explain", "source": RECIPE})), reply(text("recipe ready")))
        async with agent_runtime(repo, api) as runtime:
            events = await run_turn(runtime, "add an explain command")
    assert "create_recipe" in api.requests[0].tool_names
    broken, good = api.requests[1].tool_results()
    assert broken["is_error"] and "nothing changed" in broken["content"] and '"stage"' in broken["content"]
    assert not good.get("is_error") and "saved recipe explain (commit" in good["content"]
    assert (repo / ".agent/recipes/explain.toml").read_text() == RECIPE
    assert [e.kind for e in of_type(events, ToolAuthored)] == ["recipe"]
    assert "explain" in git(repo, "log", "-1", "--format=%s", "--", ".agent/recipes/explain.toml")


NETWORK_TOOL = '''"""Fetch a page."""

NETWORK = True


def fetch_status(url: str) -> str:
    """Say which URL would be fetched.

    Args:
        url: The address.
    """
    return "would fetch " + url


def test_fetch_status() -> None:
    assert fetch_status("x") == "would fetch x"
'''


async def test_network_tools_ask_and_bad_arguments_are_tool_errors(repo: Path) -> None:
    asked: list[ApprovalRequest] = []

    async def approve_network_once(request: ApprovalRequest) -> bool:
        asked.append(request)
        return len(asked) == 1

    with FakeMessagesAPI() as api:
        api.enqueue(reply(tool_use("create_tool", {"name": "fetch_status", "source": NETWORK_TOOL})),
                    reply(tool_use("fetch_status", {"url": "https://example.com"})),
                    reply(tool_use("call_tool", {"name": "fetch_status", "args": {"url": "https://example.org"}})),
                    reply(tool_use("fetch_status", {"address": 3})), reply(text("done")))
        async with agent_runtime(repo, api, approve=approve_network_once) as runtime:
            await run_turn(runtime, "fetch")
    assert [(a.kind, a.tool) for a in asked] == [("network", "fetch_status")] * 2
    approved, denied, bad = (api.requests[i].tool_results()[0] for i in (2, 3, 4))
    assert approved["content"] == "would fetch https://example.com" and not approved.get("is_error")
    assert denied["is_error"] and "denied" in denied["content"]
    assert bad["is_error"] and bad["content"].startswith("fetch_status:") and "internal error" not in bad["content"]


async def test_cancelling_while_streaming_keeps_the_shown_text_and_the_conversation_goes_on(repo: Path) -> None:
    with FakeMessagesAPI() as api:
        api.enqueue(reply(text("A long answer that streams slowly, piece by piece, " * 4), delay_s=0.05), reply(text("short")))
        async with agent_runtime(repo, api) as runtime:
            agent = agent_of(runtime)
            assert agent is not None
            deltas: list[str] = []

            async def consume() -> None:
                async for event in agent.run_turn("talk"):
                    if isinstance(event, TextDelta):
                        deltas.append(event.text)

            task = asyncio.create_task(consume())
            while len(deltas) < 2:
                await asyncio.sleep(0.01)
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass
            partial = copy.deepcopy(agent.messages[-1])
            after = await run_turn(runtime, "go on")
    assert partial["role"] == "assistant" and partial["content"][0]["text"].endswith("[interrupted by the user]")
    assert partial["content"][0]["text"].startswith("".join(deltas))
    assert of_type(after, TurnFinished) and [m["role"] for m in api.requests[1].messages] == ["user", "assistant", "user"]


async def test_without_a_sandbox_the_agent_still_works_with_file_tools(repo: Path) -> None:
    (repo / ".agent").mkdir()
    (repo / ".agent/config.toml").write_text('[sandbox]\nmin_level = "bubblewrap"\n')
    with FakeMessagesAPI() as api:
        api.enqueue(reply(tool_use("read_file", {"path": "README.md"})), reply(text("read")))
        async with agent_runtime(repo, api, sandbox_tier="rlimits") as runtime:
            events = await run_turn(runtime, "read")
            problems = list(runtime.core.problems)
    assert problems and "sandbox unavailable" in problems[0]
    names = api.requests[0].tool_names
    assert "read_file" in names and "run_shell" not in names and "create_tool" not in names
    assert "not available" in api.requests[0].system_text and of_type(events, TurnFinished)


async def test_old_tool_results_are_shortened_before_the_estimate_reaches_the_limit(repo: Path) -> None:
    (repo / "big.txt").write_text("".join(f"line {i} with some padding text\n" for i in range(400)))
    with FakeMessagesAPI() as api:
        api.enqueue(reply(tool_use("read_file", {"path": "big.txt"})), reply(text("read it")), reply(text("cut"), stop_reason="max_tokens"))
        async with agent_runtime(repo, api) as runtime:
            assert agent_of(runtime) is not None
            agent_of(runtime).context_limit_tokens = 6000  # the first request fits, the file's 14k characters do not
            await run_turn(runtime, "read big.txt")
            events = await run_turn(runtime, "and now?")
    notices = [n.message for n in of_type(events, Notice)]
    assert any("near the context limit: shortened 1 old tool results" in n for n in notices)
    assert any("cut off at the output limit" in n for n in notices)
    assert len(api.requests) == 3 and "shortened to save context" in api.requests[2].messages[2]["content"][0]["content"]
