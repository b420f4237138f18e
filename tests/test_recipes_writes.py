"""Recipe tool actions and project writes: a WRITES tool runs writable only when the runtime's Permissions approve it,
otherwise the run is refused (Notice + audit entry); any other tool runs with the project read-only."""

from __future__ import annotations

from pathlib import Path

from tests.gitrepo import user_state
from tests.test_catalog_writes import writer_source
from tests.recipes_helpers import open_stack, recipe_text
from tui_agent.core.agent.permissions import ApprovalRequest, approve_all

COMMAND = 'on = "command"'


def rewrite(tool: str) -> str:
    return recipe_text(COMMAND, f'tool = "{tool}"\nargs = {{ text = "{{args}}" }}')


TOOLS = {"app_writer": writer_source("app_writer", "WRITES = True"), "plain_writer": writer_source("plain_writer")}
RECIPES = {"rewrite": rewrite("app_writer"), "sneak": rewrite("plain_writer")}


async def test_writes_tool_action_needs_approval_and_plain_tools_stay_read_only(dirty_repo: Path) -> None:
    answers = [False, True]
    asked: list[ApprovalRequest] = []

    async def approve(request: ApprovalRequest) -> bool:
        asked.append(request)
        return answers.pop(0)

    async with open_stack(dirty_repo, tools=TOOLS, recipes=RECIPES, approve=approve) as stack:
        before = user_state(dirty_repo)

        [sneak] = await stack.engine.run_command("sneak", "pwned")
        assert not sneak.ok and "Read-only file system" in sneak.summary
        assert asked == [] and user_state(dirty_repo) == before

        [refused] = await stack.engine.run_command("rewrite", "denied")
        assert not refused.ok and "declares WRITES = True" in refused.summary and "not approved" in refused.summary
        assert [(r.kind, r.tool) for r in asked] == [("write", "app_writer")] and '"text": "denied"' in asked[0].detail
        assert user_state(dirty_repo) == before
        assert stack.notices("recipe rewrite (command) failed: app_writer refused")
        audit = stack.engine.runlog.entries("rewrite")[-1]
        assert audit["ok"] is False and "not approved" in audit["args"]["refused"]

        [approved] = await stack.engine.run_command("rewrite", "approved")
        assert approved.ok, approved.summary
        assert (dirty_repo / "app.py").read_text() == "approved"


async def test_read_only_mode_refuses_and_auto_mode_allows_without_asking(repo: Path) -> None:
    asked: list[ApprovalRequest] = []

    async def record(request: ApprovalRequest) -> bool:
        asked.append(request)
        return await approve_all(request)

    async with open_stack(repo, tools=TOOLS, recipes=RECIPES, approve=record, permission_mode="read-only") as stack:
        [refused] = await stack.engine.run_command("rewrite", "no")
        assert not refused.ok and "read-only mode" in refused.summary
        assert (repo / "app.py").read_text() == "print('hello')\n"
        stack.engine.permissions.set_mode("auto")  # type: ignore[union-attr]
        [done] = await stack.engine.run_command("rewrite", "auto")
        assert done.ok and (repo / "app.py").read_text() == "auto"
    assert asked == []
