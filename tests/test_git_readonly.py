"""run_shell's read-only git commands (`git status`, `git log`…) run without asking, with the project read-only; any
other command, or one with shell syntax or an option that writes or starts a program, is asked as before."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.agent_helpers import agent_runtime, of_type, run_turn
from tests.fake_messages_api import FakeMessagesAPI, reply, text, tool_use
from tests.gitrepo import git
from tui_agent.core.agent.git_readonly import read_only_git
from tui_agent.core.agent.permissions import ApprovalRequest
from tui_agent.core.events import ToolCallFinished
from tui_agent.core.sandbox.launch import probe_bubblewrap


@pytest.mark.parametrize("command", ["git status", "git log --oneline -5", "git diff HEAD~1 -- src", "git show HEAD:README.md",
                                     "git branch -a", "git log --format='%h %s'"])
def test_reading_git_commands_are_recognised(command: str) -> None:
    assert read_only_git(command)


@pytest.mark.parametrize("command", ["git commit -am x", "git status; rm -rf x", "git log | sh", "git log > out.txt",
                                     "git -c core.pager=evil log", "git diff --output=README.md", "git branch new",
                                     "git log $(touch x)", "git grep -O evil x", "git reflog expire --all", "gitk",
                                     "git status && touch x", "git log `id`", "git reset --hard", "git checkout ."])
def test_anything_else_is_not(command: str) -> None:
    assert not read_only_git(command)


@pytest.mark.skipif(probe_bubblewrap() is not None, reason="needs a working bubblewrap")
async def test_git_status_and_log_run_unasked_and_cannot_write(repo: Path, api: FakeMessagesAPI) -> None:
    asked: list[ApprovalRequest] = []

    async def refuse(request: ApprovalRequest) -> bool:
        asked.append(request)
        return False

    # the repository's own configuration starts a program on `git diff`: it runs, but the project is read-only
    canary = repo / "canary.txt"
    git(repo, "config", "diff.external", f"sh -c 'echo written > {canary}' --")
    (repo / "README.md").write_text("changed\n")
    async with agent_runtime(repo, api, approve=refuse, sandbox_tier="bubblewrap") as runtime:
        api.enqueue(reply(tool_use("run_shell", {"command": "git status --short"})),
                    reply(tool_use("run_shell", {"command": "git diff"})),
                    reply(tool_use("run_shell", {"command": "git log --oneline -1"})),
                    reply(tool_use("run_shell", {"command": "git log --oneline -1 && touch made.txt"})), reply(text("ok")))
        events = await run_turn(runtime, "what is the state of the repository?")
    status, diff, log, chained = of_type(events, ToolCallFinished)
    assert not status.is_error and not log.is_error, (status.result, log.result)
    assert "M README.md" in status.result and "Read-only file system" in diff.result
    assert git(repo, "log", "--oneline", "-1").strip() in log.result
    assert chained.is_error and "denied" in chained.result
    assert [request.subject for request in asked] == ["git log --oneline -1 && touch made.txt"]
    assert not canary.exists() and not (repo / "made.txt").exists()
