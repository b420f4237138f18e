"""Issue 33's speed: a reply's back-to-back read-only catalog calls share one sandboxed run (one fork-server round trip),
each call still in its own process, in order, with its own result and the files it read; anything else between them
(a file edit, a tool that asks) splits the batch, so a later call sees what an earlier one changed."""

from __future__ import annotations

import asyncio
import json
import secrets
import time
from pathlib import Path

import pytest

from tests.agent_helpers import agent_runtime, of_type, run_turn
from tests.fake_messages_api import FakeMessagesAPI, reply, text, tool_use
from tests.test_cancel import processes_with, wait_for
from tui_agent.core.agent.loop import CANCELLED_RESULT
from tui_agent.core.events import ToolCallFinished, ToolCallStarted
from tui_agent.core.runtime_state import agent_of, catalog_of

PEEK = '''import os


def peek(x: int) -> dict:
    """Read note.txt and say which process ran the call.

    Args:
        x: a number; negative fails
    """
    if x < 0:
        raise ValueError("negative")
    with open("note.txt", encoding="utf-8") as handle:
        return {"x": x, "note": handle.read().strip(), "pid": os.getpid(), "run": os.environ.get("TUIAGENT_SANDBOX_RUN")}
'''

NAP = '''import subprocess


def nap(x: int) -> int:
    """Sleep a while in a child process.

    Args:
        x: a number
    """
    subprocess.run(["sh", "-c", "sleep 8; : TAG"], check=False)
    return x
'''


def answers(events: list[object]) -> list[tuple[bool, dict[str, object] | str]]:
    """Each catalog call's (is_error, the tool's value or the error text), in order."""
    found: list[tuple[bool, dict[str, object] | str]] = []
    for event in of_type(events, ToolCallFinished):
        if event.name == "write_file":
            assert not event.is_error, event.result
            continue
        if event.is_error:
            found.append((True, event.result))
            continue
        start = event.result.index("{")
        found.append((False, json.loads(event.result[start:event.result.rindex("}") + 1])))
    return found


async def test_back_to_back_read_only_calls_share_one_run_and_an_edit_between_splits_it(repo: Path,
                                                                                        api: FakeMessagesAPI) -> None:
    (repo / "note.txt").write_text("old\n")
    tools = repo / ".agent" / "tools"
    tools.mkdir(parents=True)
    (tools / "peek.py").write_text(PEEK)
    async with agent_runtime(repo, api) as runtime:
        assert catalog_of(runtime).spec("peek") is not None and runtime.core.sandbox.tier == "bubblewrap"
        api.enqueue(reply(tool_use("peek", {"x": 1}), tool_use("peek", {"x": -1}), tool_use("peek", {"x": 2}),
                          tool_use("write_file", {"path": "note.txt", "content": "new\n"}),
                          tool_use("peek", {"x": 3}), tool_use("call_tool", {"name": "peek", "args": {"x": 4}}),
                          tool_use("write_file", {"path": "other.txt", "content": "x\n"}),
                          tool_use("peek", {"x": 5})),
                    reply(text("done")))
        events = await run_turn(runtime, "peek around an edit")
        read = catalog_of(runtime).state.files_read("peek")
    got = answers(events)
    first, failed, second, third, fourth, alone = got
    assert failed[0] and "negative" in str(failed[1]), failed  # its own failure, not the batch's
    values = [value for is_error, value in (first, second, third, fourth, alone) if not is_error]
    assert [(v["x"], v["note"]) for v in values if isinstance(v, dict)] == [
        (1, "old"), (2, "old"), (3, "new"), (4, "new"), (5, "new")], got  # in order: the edit between is seen
    one, two, three, four, five = (v for v in values if isinstance(v, dict))
    # each run is a fresh sandbox (its own token); a batch's calls are forked children of its process 1
    assert None not in (one["run"], three["run"]) and one["run"] == two["run"] and three["run"] == four["run"], got
    assert one["run"] != three["run"]  # two batches: the edit split them
    assert len({one["pid"], two["pid"], 1}) == 3 and len({three["pid"], four["pid"], 1}) == 3, got  # a process each
    assert five["pid"] == 1 and five["run"] not in (one["run"], three["run"]), five  # alone after an edit: its own run
    assert read == ["note.txt"]  # each batched call still reports the files it read (drift tracking)


async def test_cancelling_a_turn_ends_a_batch_running_in_the_sandbox(repo: Path, api: FakeMessagesAPI) -> None:
    tag = f"nap-{secrets.token_hex(5)}"
    tools = repo / ".agent" / "tools"
    tools.mkdir(parents=True)
    (tools / "nap.py").write_text(NAP.replace("TAG", tag))
    async with agent_runtime(repo, api) as runtime:
        agent = agent_of(runtime)
        assert agent is not None and catalog_of(runtime).spec("nap") is not None
        api.enqueue(reply(tool_use("nap", {"x": 1}), tool_use("nap", {"x": 2})), reply(text("done")))
        seen: list[object] = []

        async def consume() -> None:
            async for event in agent.run_turn("nap twice"):
                seen.append(event)

        task = asyncio.create_task(consume())
        await wait_for(lambda: processes_with(tag), 30, "the batch's first call to start its sleep")
        cancelled_at = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await wait_for(lambda: not processes_with(tag), 1.5, "every process of the batch to end")
        assert time.monotonic() - cancelled_at < 2.0
        assert len(of_type(seen, ToolCallStarted)) == 1  # the second call never started: it is reported cancelled
        assert [block["content"] for block in agent.messages[-1]["content"]] == [CANCELLED_RESULT] * 2
