"""run_shell's output streams out as ToolOutputDelta events while the command runs; the model and the session get only
the final result, as before."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.agent_helpers import agent_runtime, of_type
from tests.fake_messages_api import FakeMessagesAPI, reply, text, tool_use
from tui_agent.core.agent.livecall import coalesced
from tui_agent.core.agent.sessions import read_records
from tui_agent.core.events import Event, TextDelta, ToolCallFinished, ToolOutputDelta
from tui_agent.core.runtime_state import agent_of

TIERS = ["bubblewrap", "rlimits"]
COMMAND = "echo first-line; echo oops >&2; sleep 2; echo second-line"


@pytest.mark.parametrize("tier", TIERS)
async def test_a_shell_commands_output_arrives_while_it_runs_and_the_model_gets_the_final_result(repo: Path, tier: str) -> None:
    with FakeMessagesAPI() as api:
        api.enqueue(reply(tool_use("run_shell", {"command": COMMAND})))
        api.enqueue(reply(text("done")))
        async with agent_runtime(repo, api, sandbox_tier=tier) as runtime:
            agent = agent_of(runtime)
            assert agent is not None
            seen: list[tuple[float, Event]] = []
            async for event in agent.run_turn("run it"):
                seen.append((time.monotonic(), event))
            events = [event for _at, event in seen]
            finished = of_type(events, ToolCallFinished)[0]
            finished_at = next(at for at, event in seen if event is finished)
            deltas = [(at, event) for at, event in seen if isinstance(event, ToolOutputDelta)]
            assert deltas and all(event.call_id == finished.call_id for _at, event in deltas)
            first_at = next(at for at, event in deltas if "first-line" in event.text)
            assert finished_at - first_at > 1.0  # seen while the command still slept
            assert not any("second-line" in event.text for at, event in deltas if at <= first_at)
            live = "".join(event.text for _at, event in deltas)
            assert "first-line" in live and "oops" in live and "second-line" in live
            assert finished.result == "exit code: 0\n[stdout]\nfirst-line\nsecond-line\n\n[stderr]\noops\n"
            assert agent.messages[2]["content"][0]["content"] == finished.result  # the model reads the final result only
            session = read_records(next((repo / ".agent" / "sessions").glob("*.jsonl")))
            recorded = [record.get("event") for record in session if record.get("type") == "event"]
            assert "ToolCallFinished" in recorded and "ToolOutputDelta" not in recorded


async def test_a_command_that_times_out_reports_what_it_printed_as_text(repo: Path) -> None:
    with FakeMessagesAPI() as api:
        api.enqueue(reply(tool_use("run_shell", {"command": "echo before; sleep 30", "timeout": 2})))
        api.enqueue(reply(text("done")))
        async with agent_runtime(repo, api, sandbox_tier="rlimits") as runtime:
            agent = agent_of(runtime)
            assert agent is not None
            started = time.monotonic()
            events = [event async for event in agent.run_turn("run it")]
            assert time.monotonic() - started < 10
            finished = of_type(events, ToolCallFinished)[0]
            assert finished.result == "exit code: timeout\n[stdout]\nbefore\n\n[stderr]\ntimed out after 2s" and finished.is_error
            assert "before" in "".join(event.text for event in of_type(events, ToolOutputDelta))


def test_consecutive_deltas_of_one_call_are_merged_and_nothing_else_is() -> None:
    events: list[Event] = [ToolOutputDelta("a", "1"), ToolOutputDelta("a", "2"), ToolOutputDelta("b", "3"), TextDelta("x"),
                           ToolOutputDelta("b", "4")]
    assert coalesced(events) == [ToolOutputDelta("a", "12"), ToolOutputDelta("b", "3"), TextDelta("x"), ToolOutputDelta("b", "4")]
