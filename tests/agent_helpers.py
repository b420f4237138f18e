"""Test helpers for the agent: a runtime on a real repo talking to the fake Messages API, and a sample tool."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.fake_messages_api import FakeMessagesAPI
from tui_agent.core.agent.permissions import ApprovalCallback, approve_all
from tui_agent.core.events import Event, ToolOutputDelta
from tui_agent.core.runtime import Runtime, open_runtime
from tui_agent.core.runtime_state import agent_of

FLAKY_TOOL = '''"""Find the recipe runs whose outcome flips between pass and fail."""

import json
from pathlib import Path

DEPENDS_ON = ["traces/*.jsonl"]


def find_flaky_recipe_runs(name: str) -> list[str]:
    """List the run ids of one recipe that failed and later passed.

    Args:
        name: The recipe's name.
    """
    outcomes: dict[str, list[str]] = {}
    for path in sorted(Path("traces").glob("*.jsonl")):
        for line in path.read_text().splitlines():
            record = json.loads(line)
            if record["recipe"] == name:
                outcomes.setdefault(record["run"], []).append(record["status"])
    return sorted(run for run, statuses in outcomes.items() if "fail" in statuses and "pass" in statuses)


def test_find_flaky_recipe_runs() -> None:
    assert find_flaky_recipe_runs("no-such-recipe") == []
'''

GOOD_TOOL = '''"""Count lines."""


def count_lines(path: str) -> int:
    """Count the lines of a file.

    Args:
        path: The file.
    """
    return len(open(path).read().splitlines())


def test_count_lines() -> None:
    assert count_lines("README.md") >= 1
'''


def write_traces(repo: Path) -> None:
    traces = repo / "traces"
    traces.mkdir()
    (traces / "mon.jsonl").write_text(
        '{"recipe": "deploy", "run": "r1", "status": "fail"}\n{"recipe": "deploy", "run": "r2", "status": "pass"}\n'
        '{"recipe": "lint", "run": "r3", "status": "fail"}\n'
    )
    (traces / "tue.jsonl").write_text('{"recipe": "deploy", "run": "r1", "status": "pass"}\n{"recipe": "lint", "run": "r3", "status": "fail"}\n')


@asynccontextmanager
async def agent_runtime(repo: Path, api: FakeMessagesAPI, *, approve: ApprovalCallback = approve_all, **options: Any) -> AsyncIterator[Runtime]:
    runtime = await open_runtime(repo, approve=approve, base_url=api.base_url, api_key="test-key", retry_base_delay_s=0.01, **options)
    try:
        assert agent_of(runtime) is not None, runtime.core.model_error
        yield runtime
    finally:
        await runtime.aclose()


async def run_turn(runtime: Runtime, prompt: str) -> list[Event]:
    assert agent_of(runtime) is not None
    return [event async for event in agent_of(runtime).run_turn(prompt)]


def of_type(events: list[Event], kind: type) -> list[Any]:
    return [event for event in events if isinstance(event, kind)]


async def cancel_once_started(runtime: Runtime, prompt: str, on_started: Callable[[], object] = lambda: None) -> float:
    """Run a turn until its shell command prints `started` (then `on_started()`, as the person would act while it
    runs), and cancel it as Esc does; the time of the cancel (time.monotonic()) is returned. A run's writes reach the
    project when it ends (an overlay): its output is what says it is running."""
    assert agent_of(runtime) is not None
    turn = agent_of(runtime).run_turn(prompt)
    started = asyncio.Event()

    async def consume() -> None:
        async for event in turn:
            if isinstance(event, ToolOutputDelta) and "started" in event.text and not started.is_set():
                on_started()
                started.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(started.wait(), 30)
    cancelled_at = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await turn.aclose()
    return cancelled_at
