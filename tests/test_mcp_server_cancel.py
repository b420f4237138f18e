"""`tuiagent mcp serve` with the official `mcp` client abandoning a call: the next call of the tool is not stalled."""

from __future__ import annotations

import time
from pathlib import Path

import anyio

from tests.mcp_helpers import seed_catalog, served, text_of

NAP_SOURCE = '''"""Sleep a while."""

import time


def nap(seconds: float) -> str:
    """Sleep, then say so.

    Args:
        seconds: how long to sleep
    """
    time.sleep(seconds)
    return "awake"
'''


async def test_a_call_abandoned_after_one_second_does_not_stall_the_next(repo: Path) -> None:
    """The SDK's cancel scope sends notifications/cancelled; the next call answers about as fast as the first."""
    await seed_catalog(repo, {"nap": NAP_SOURCE})
    async with served(repo) as (session, _notes, _init):
        assert text_of(await session.call_tool("nap", {"seconds": 0})) == "awake"  # the sandbox is warm
        started = time.perf_counter()
        assert text_of(await session.call_tool("nap", {"seconds": 0.5})) == "awake"
        first = time.perf_counter() - started

        with anyio.move_on_after(1.0) as scope:
            await session.call_tool("nap", {"seconds": 60})
        assert scope.cancelled_caught

        for call in range(4):  # the stall hit the second or third call after the abandoned one (an arm that never woke)
            started = time.perf_counter()
            with anyio.fail_after(40):
                assert text_of(await session.call_tool("nap", {"seconds": 0.5})) == "awake"
            took = time.perf_counter() - started
            assert took < max(2 * first, 1.5), f"call {call + 1} after the abandoned one took {took:.2f} s, the first {first:.2f} s"
