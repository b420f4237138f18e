"""The file built-ins in a real git repo: confinement (.., absolute, symlinks out), approvals, exact edits."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.gitrepo import user_state
from tui_agent.core.agent.file_tools import edit_file, read_file, write_file
from tui_agent.core.agent.search_tools import grep, list_files
from tui_agent.core.agent.permissions import ApprovalRequest, Permissions, approve_all, deny_all
from tui_agent.core.agent.toolbase import ToolContext, ToolFailure
from tui_agent.core.events import ApprovalDenied
from tui_agent.core.project import Project


def context(repo: Path, mode: str = "ask", approve=approve_all, name: str = "tool") -> ToolContext:
    return ToolContext(Project.at(repo), Permissions(mode, approve), call_id="c1", tool_name=name)


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    secret = tmp_path / "outside"
    secret.mkdir()
    (secret / "secret.txt").write_text("top secret\n")
    return secret


async def test_read_file_numbers_lines_and_pages(repo: Path) -> None:
    (repo / "long.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    out = await read_file(context(repo), {"path": "long.txt", "offset": 3, "limit": 2})
    assert out.text.splitlines()[:2] == ["     3\tline 3", "     4\tline 4"]
    assert "offset=5" in out.text


@pytest.mark.parametrize("path", ["../outside/secret.txt", "{outside}/secret.txt", "link/secret.txt", "filelink"])
async def test_paths_outside_the_project_are_refused(repo: Path, outside: Path, path: str) -> None:
    os.symlink(outside, repo / "link")
    os.symlink(outside / "secret.txt", repo / "filelink")
    ctx = context(repo)
    with pytest.raises(ToolFailure, match="outside the project"):
        await read_file(ctx, {"path": path.format(outside=outside)})
    with pytest.raises(ToolFailure, match="outside the project"):
        await write_file(ctx, {"path": path.format(outside=outside), "content": "pwned"})
    with pytest.raises(ToolFailure, match="outside the project"):
        await grep(ctx, {"pattern": "secret", "path": path.format(outside=outside)})
    assert (outside / "secret.txt").read_text() == "top secret\n"


async def test_listing_and_grep_do_not_follow_symlinks_out(repo: Path, outside: Path) -> None:
    os.symlink(outside / "secret.txt", repo / "filelink")
    listed = await list_files(context(repo), {"pattern": "*"})
    assert "README.md" in listed.text and "filelink" not in listed.text
    found = await grep(context(repo), {"pattern": "secret|hello"})
    assert "app.py:1: print('hello')" in found.text and "top secret" not in found.text
    with pytest.raises(ToolFailure):
        await list_files(context(repo), {"pattern": "../*"})


async def test_writes_outside_agent_ask_with_the_diff_and_denial_changes_nothing(dirty_repo: Path) -> None:
    before = user_state(dirty_repo)
    asked: list[ApprovalRequest] = []

    async def refuse(request: ApprovalRequest) -> bool:
        asked.append(request)
        return False

    ctx = context(dirty_repo, approve=refuse, name="edit_file")
    with pytest.raises(ToolFailure, match="denied"):
        await edit_file(ctx, {"path": "app.py", "old": "hello, unstaged", "new": "bye"})
    assert asked[0].kind == "write" and "-print('hello, unstaged')" in asked[0].detail and "+print('bye')" in asked[0].detail
    assert isinstance(ctx.events[0], ApprovalDenied)
    assert user_state(dirty_repo) == before
    # .agent/ is a protected path (issue 10): a write there asks even in auto mode; catalog files go through create_tool.
    with pytest.raises(ToolFailure, match="protected path .agent"):
        await write_file(context(dirty_repo, mode="auto", approve=deny_all), {"path": ".agent/notes.md", "content": "x\n"})
    assert not (dirty_repo / ".agent/notes.md").exists()
    with pytest.raises(ToolFailure, match="create_tool"):
        await write_file(context(dirty_repo, mode="auto"), {"path": ".agent/tools/x.py", "content": "x"})
    with pytest.raises(ToolFailure, match="git"):
        await write_file(context(dirty_repo, mode="auto"), {"path": ".git/config", "content": "x"})


async def test_modes_auto_accepts_edits_read_only_refuses(repo: Path) -> None:
    await write_file(context(repo, mode="auto", approve=deny_all), {"path": "new.txt", "content": "a\n"})
    assert (repo / "new.txt").read_text() == "a\n"
    with pytest.raises(ToolFailure, match="read-only"):
        await write_file(context(repo, mode="read-only"), {"path": "new.txt", "content": "b\n"})
    assert (repo / "new.txt").read_text() == "a\n"


async def test_edit_file_needs_an_exact_unique_match(repo: Path) -> None:
    (repo / "code.py").write_text("x = 1\nx = 1\ny = 2\n")
    ctx = context(repo)
    with pytest.raises(ToolFailure, match="occurs 2 times"):
        await edit_file(ctx, {"path": "code.py", "old": "x = 1", "new": "x = 3"})
    with pytest.raises(ToolFailure, match="not found"):
        await edit_file(ctx, {"path": "code.py", "old": "z = 1", "new": "x = 3"})
    out = await edit_file(ctx, {"path": "code.py", "old": "y = 2", "new": "y = 5"})
    assert "line 3" in out.text and (repo / "code.py").read_text() == "x = 1\nx = 1\ny = 5\n"
