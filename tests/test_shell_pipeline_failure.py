"""A command whose pipeline hides a failure (`python3 -m pytest 2>&1 | tail`, pytest not installed) is never shown as
ok nor given to the model as a plain exit 0; a command cut short by its reader (`yes | head -1`) is not a failure."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.agent_helpers import agent_runtime, of_type, run_turn
from tests.fake_messages_api import FakeMessagesAPI, reply, text, tool_use
from tui_agent.core.events import ToolCallFinished


@pytest.mark.parametrize("tier", ["bubblewrap", "rlimits"])
async def test_a_failure_hidden_by_a_pipe_is_an_error_for_the_person_and_the_model(
        repo: Path, api: FakeMessagesAPI, tier: str) -> None:
    async with agent_runtime(repo, api, sandbox_tier=tier) as runtime:
        api.enqueue(reply(tool_use("run_shell", {"command": "python3 -m no_such_module_here 2>&1 | tail -5"})),
                    reply(tool_use("run_shell", {"command": "yes | head -1"})), reply(text("done")))
        events = await run_turn(runtime, "run the tests")
    hidden, cut = of_type(events, ToolCallFinished)
    assert hidden.is_error and "No module named no_such_module_here" in hidden.result
    sent = api.requests[1].tool_results()[0]
    assert sent["is_error"] is True
    assert "a command of the pipeline failed (its exit statuses: 1 0)" in api.requests[1].tool_result_text()
    assert not cut.is_error and cut.result.startswith("exit code: 0\n")
