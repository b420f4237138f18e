"""Test helpers for the agent: a runtime on a real repo talking to the fake Messages API, and a sample tool."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from tests.fake_messages_api import FakeMessagesAPI
from tui_agent.core.agent.permissions import ApprovalCallback, approve_all
from tui_agent.core.events import Event
from tui_agent.core.runtime import Runtime, open_runtime

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
        assert runtime.agent is not None, runtime.model_error
        yield runtime
    finally:
        await runtime.aclose()


async def run_turn(runtime: Runtime, prompt: str) -> list[Event]:
    assert runtime.agent is not None
    return [event async for event in runtime.agent.run_turn(prompt)]


def of_type(events: list[Event], kind: type) -> list[Any]:
    return [event for event in events if isinstance(event, kind)]
