"""The TUI shows the model's plan as a checklist, and plan mode's proposal is approved in the approval modal."""

from __future__ import annotations

from pathlib import Path

from tests.fake_messages_api import reply, text, tool_use
from tests.scripted_model import ScriptedModel
from tests.ui_support import SIZE, make_app, ready, send, turn_answered, wait_until
from tui_agent.ui.screens.approval import ApprovalScreen
from tui_agent.ui.widgets.messages import NoticeMessage

PLAN = [{"content": "read the README", "status": "completed"},
        {"content": "write notes.md", "status": "in_progress", "priority": "high"}]


async def test_plan_mode_shows_the_plan_and_an_approved_proposal_switches_to_ask(repo: Path, scripted: ScriptedModel) -> None:
    scripted.enqueue(reply(tool_use("write_file", {"path": "notes.md", "content": "early\n"})),
                reply(tool_use("update_plan", {"entries": PLAN})),
                reply(tool_use("propose_plan", {"plan": "1. write **notes.md**"})),
                reply(tool_use("write_file", {"path": "notes.md", "content": "x\n"})), reply(text("written")))
    app = make_app(repo, client=scripted)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        for _ in range(3):
            await pilot.press("shift+tab")
        assert app.runtime.core.permissions.mode == "plan" and "plan" in app.header.render().plain
        await send(pilot, app, "take notes")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), timeout=60, message="the plan's approval")
        modal = app.screen
        assert isinstance(modal, ApprovalScreen) and modal.kind == "plan"
        assert "switch to ask mode" in modal.summary and [choice.key for choice in modal.choices] == ["y", "r", "n"]  # r: keep planning, with what to change
        assert not (repo / "notes.md").exists()  # the write before the proposal was refused without asking
        plans = [w for w in app.screen_stack[0].query(NoticeMessage) if w.entry.text.startswith("Plan\n")]
        assert len(plans) == 1 and plans[0].entry.text == "Plan\n☑ read the README\n◐ write notes.md (high)"
        await pilot.press("y")  # the plan is approved: ask mode, so the next write asks too
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen) and app.screen.kind == "write",
                         timeout=60, message="the write's approval")
        assert app.runtime.core.permissions.mode == "ask" and "plan" not in app.header.render().plain
        await pilot.press("y")
        await wait_until(pilot, lambda: turn_answered(app, "written"), timeout=60, message="the turn")
        assert any(entry.text == "Plan approved: the permission mode is now ask." for entry in app.conversation.entries)
    assert (repo / "notes.md").read_text() == "x\n"
