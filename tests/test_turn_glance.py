"""A session's first request takes its environment's git glance (status, recent commits) in a thread started with the
turn, while undo checkpoints the work tree; a turn that ends before its request leaves no glance for a later one."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from tests.agent_helpers import agent_runtime, run_turn
from tests.catalog_support import tool_source
from tests.fake_messages_api import FakeMessagesAPI, reply, text
from tui_agent.core.agent import instructions
from tui_agent.core.runtime_state import agent_of


def environment_of(api: FakeMessagesAPI, number: int) -> str:
    return api.requests[number].system_text.split("# Environment")[1]


async def test_the_glance_is_on_its_way_while_undo_checkpoints_and_shows_the_tree_as_the_prompt_found_it(
        repo: Path, api: FakeMessagesAPI) -> None:
    api.enqueue(reply(text("Hello.")))
    async with agent_runtime(repo, api) as runtime:
        agent = agent_of(runtime)
        assert agent is not None and agent.recorder is not None
        recorder, begin = agent.recorder, agent.recorder.begin
        glancing: list[bool] = []

        async def begin_watched(*args: Any) -> None:
            glancing.append(str(repo) in instructions._EARLY_GLANCES)
            await begin(*args)

        recorder.begin = begin_watched  # type: ignore[method-assign,assignment]
        (repo / "typed-before.txt").write_text("made before the prompt\n")
        await run_turn(runtime, "hi")
    assert glancing == [True]
    assert "?? typed-before.txt" in environment_of(api, 0)
    assert str(repo) not in instructions._EARLY_GLANCES  # taken by the request


async def test_a_turn_cancelled_before_its_request_leaves_no_glance_for_the_next(repo: Path, api: FakeMessagesAPI) -> None:
    api.enqueue(reply(text("Hello.")))
    async with agent_runtime(repo, api) as runtime:
        agent = agent_of(runtime)
        assert agent is not None and agent.recorder is not None
        recorder, begin = agent.recorder, agent.recorder.begin
        in_begin, release = asyncio.Event(), asyncio.Event()

        async def begin_held(*args: Any) -> None:
            in_begin.set()
            await release.wait()
            await begin(*args)

        recorder.begin = begin_held  # type: ignore[method-assign,assignment]
        turn = asyncio.create_task(run_turn(runtime, "first"))
        await asyncio.wait_for(in_begin.wait(), 30)
        assert str(repo) in instructions._EARLY_GLANCES
        turn.cancel()
        await asyncio.gather(turn, return_exceptions=True)
        assert str(repo) not in instructions._EARLY_GLANCES
        recorder.begin = begin  # type: ignore[method-assign]
        (repo / "made-later.txt").write_text("made after the cancelled turn\n")
        await run_turn(runtime, "second")
    assert len(api.requests) == 1
    assert "?? made-later.txt" in environment_of(api, 0)


async def test_a_tool_written_by_hand_just_before_the_prompt_is_in_the_first_request(repo: Path, api: FakeMessagesAPI) -> None:
    api.enqueue(reply(text("Hello.")))
    async with agent_runtime(repo, api) as runtime:
        watcher = runtime.workshop.watcher
        assert watcher is not None
        await asyncio.wait_for(watcher.ready.wait(), 30)
        (repo / ".agent" / "tools" / "triple.py").write_text(tool_source("triple", "return 3 * x"))
        await run_turn(runtime, "hi")  # its settle starts with the turn, while undo checkpoints the work tree
    assert "triple" in api.requests[0].tool_names
