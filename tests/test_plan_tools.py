"""update_plan (the model's checklist) and plan mode (propose_plan) against the in-process scripted model, on real files."""

from __future__ import annotations

import json
from pathlib import Path

from tests.scripted_model import ScriptedModel, text_block, tool_use_block
from tui_agent.core.agent.loop import Agent
from tui_agent.core.agent.permissions import ApprovalRequest, Permissions, deny_all
from tui_agent.core.agent.sessions import SessionLog
from tui_agent.core.events import (PermissionModeChanged, PlanEntry, PlanUpdated, ToolCallFinished, TurnFinished)
from tui_agent.core.project import Project
from tui_agent.core.settings import Settings

PLAN = [{"content": "read the parser", "status": "completed"},
        {"content": "fix the off-by-one", "status": "in_progress", "priority": "high"},
        {"content": "add a test", "status": "pending", "priority": "low"}]


def agent_in(root: Path, model: ScriptedModel, permissions: Permissions) -> Agent:
    project = Project.at(root)
    return Agent(project=project, settings=Settings(), client=model, permissions=permissions,
                 session=SessionLog.create(project, model=model.model))


async def test_update_plan_emits_the_whole_plan_and_changes_no_file(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("as it was\n")
    model = ScriptedModel().say(tool_use_block("update_plan", {"entries": PLAN}, "toolu_1")).say(text_block("Planned."))
    agent = agent_in(tmp_path, model, Permissions("read-only", deny_all))  # no approval, even in read-only mode
    before = sorted(path.name for path in tmp_path.iterdir() if path.name != ".agent")

    events = [event async for event in agent.run_turn("plan it")]

    [plan] = [event for event in events if isinstance(event, PlanUpdated)]
    assert plan.entries == (PlanEntry("read the parser", "completed", "medium"),
                            PlanEntry("fix the off-by-one", "in_progress", "high"),
                            PlanEntry("add a test", "pending", "low"))
    [finished] = [event for event in events if isinstance(event, ToolCallFinished)]
    assert not finished.is_error and "1/3 completed" in finished.result
    assert sorted(path.name for path in tmp_path.iterdir() if path.name != ".agent") == before
    assert "update_plan" in [tool["name"] for tool in model.requests[0]["tools"]]
    records = [json.loads(line) for line in agent.session.path.read_text().splitlines()]
    assert any(record.get("event") == "PlanUpdated" for record in records)  # recorded, so session/load can replay it


async def test_a_malformed_plan_is_an_error_result_with_a_clear_reason(tmp_path: Path) -> None:
    bad_inputs = [{"entries": "do it"}, {"entries": [{"content": "x", "status": "done"}]},
                  {"entries": [{"content": "", "status": "pending"}]},
                  {"entries": [{"content": "x", "status": "pending", "priority": "urgent"}]},
                  {"entries": [{"content": "x", "status": "pending", "owner": "me"}]},
                  {"entries": [{"content": "a", "status": "in_progress"}, {"content": "b", "status": "in_progress"}]}]
    model = ScriptedModel()
    for number, bad in enumerate(bad_inputs):
        model.say(tool_use_block("update_plan", bad, f"toolu_{number}"))
    model.say(text_block("Gave up."))
    agent = agent_in(tmp_path, model, Permissions("ask", deny_all))

    events = [event async for event in agent.run_turn("plan it")]

    assert not [event for event in events if isinstance(event, PlanUpdated)]
    results = [event.result for event in events if isinstance(event, ToolCallFinished)]
    assert all(event.is_error for event in events if isinstance(event, ToolCallFinished)) and len(results) == 6
    for result, needle in zip(results, ["must be a list", "status must be one of", "content must be a non-empty",
                                        "priority must be one of", "unknown field(s) owner", "at most one entry"], strict=True):
        assert needle in result and "\n" not in result, result


async def test_plan_mode_refuses_writes_then_an_approved_plan_switches_to_ask_and_the_model_proceeds(tmp_path: Path) -> None:
    asked: list[ApprovalRequest] = []

    async def approve_plans(request: ApprovalRequest) -> bool:
        asked.append(request)
        return request.kind == "plan"

    permissions = Permissions("ask", approve_plans)
    permissions.set_mode("plan")
    model = ScriptedModel().say(tool_use_block("write_file", {"path": "x.txt", "content": "x"}, "toolu_1"))
    model.say(tool_use_block("propose_plan", {"plan": "1. write x.txt"}, "toolu_2")).say(text_block("Doing it."))
    agent = agent_in(tmp_path, model, permissions)

    events = [event async for event in agent.run_turn("make x")]

    refused, proposed = [event for event in events if isinstance(event, ToolCallFinished)]
    assert refused.is_error and "plan mode" in refused.result and not (tmp_path / "x.txt").exists()
    assert not proposed.is_error and "now `ask`" in proposed.result
    assert [request.detail for request in asked] == ["1. write x.txt"]  # the write was refused without asking
    assert [event.mode for event in events if isinstance(event, PermissionModeChanged)] == ["ask"]
    assert permissions.mode == "ask" and isinstance(events[-1], TurnFinished)
    system = json.dumps(model.requests[0]["system"])
    assert "propose_plan" in system


async def test_a_refused_plan_keeps_plan_mode_and_the_model_is_told_to_revise(tmp_path: Path) -> None:
    permissions = Permissions("auto", deny_all)
    permissions.set_mode("plan")
    model = ScriptedModel().say(tool_use_block("propose_plan", {"plan": "rewrite everything"}, "toolu_1"))
    model.say(text_block("What should change?"))
    agent = agent_in(tmp_path, model, permissions)

    events = [event async for event in agent.run_turn("plan")]

    [finished] = [event for event in events if isinstance(event, ToolCallFinished)]
    assert finished.is_error and "did not approve the plan" in finished.result
    assert permissions.mode == "plan" and permissions.mode_after_plan() == "auto"
    assert not [event for event in events if isinstance(event, PermissionModeChanged)]
