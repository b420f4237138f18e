"""What Claude Code and aider users reach for: a denial with a reason the model reads."""

from __future__ import annotations

from pathlib import Path

from tests.fake_messages_api import FakeMessagesAPI, reply, text, tool_use
from tests.ui_support import make_app, ready, send, turn_answered, wait_until
from tui_agent.ui.screens.approval import ApprovalScreen


async def test_denying_with_a_reason_puts_the_reason_in_the_result_the_model_reads(repo: Path, api: FakeMessagesAPI) -> None:
    api.enqueue(reply(tool_use("run_shell", {"command": "touch canary"})), reply(text("understood")))
    app = make_app(repo, sandbox_tier="rlimits")
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        await send(pilot, app, "make the file")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), timeout=20, message="the approval")
        await pilot.press("r")
        assert isinstance(app.screen, ApprovalScreen), "r must open the reason box, not answer"
        for key in "use uv instead":  # its letters (y, n, e, t...) are words, not answers
            await pilot.press("space" if key == " " else key)
        await pilot.press("enter")
        await wait_until(pilot, lambda: turn_answered(app, "understood"), timeout=60, message="the turn, denied")
        result = str(api.requests[-1].messages[-1])
        assert "The person denied this call: use uv instead" in result, result
        assert not (repo / "canary").exists() and app.runtime is not None and app.runtime.permissions.rules() == []
