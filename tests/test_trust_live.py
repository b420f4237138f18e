"""A pull that changes the grants during a trusted session is noticed, said, and not applied (issue 22): the session
keeps what the person approved; the next open (or /trust) asks again."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from tests.gitrepo import git
from tests.hostile.repo import TOOL, hostile_repo, recipe
from tui_agent.core.agent.permissions import deny_all
from tui_agent.core.project import Project
from tui_agent.core.runtime import open_runtime
from tui_agent.core.runtime_state import NoModel, recipes_of
from tui_agent.core.trust import check, grant

pytestmark = pytest.mark.usefixtures("untrusted_config")


def marking_tool(marker: Path) -> str:
    """greet, appending its argument to `marker` when called (its own test calls it with "x", the recipe with "edit")."""
    return TOOL.format(marker=str(marker.parent / "unused")).replace(
        'return f"hello {{name}}"'.replace("{{", "{").replace("}}", "}"),
        f'open({str(marker)!r}, "a").write(name)\n    return f"hello {{name}}"')


def recipe_ran(marker: Path) -> bool:
    return marker.exists() and "edit" in marker.read_text()


async def edit_and_settle(runtime: NoModel, repo: Path, name: str, marker: Path) -> bool:
    """Edit a .txt file, let the watcher hand it to the recipes and every recipe it started finish: True if greet ran
    (no fixed wait: a held recipe that fired anyway is seen however slow the machine)."""
    assert runtime.workshop.watcher is not None and recipes_of(runtime) is not None
    (repo / name).write_text("x\n")
    await runtime.workshop.watcher.settle()
    await asyncio.wait_for(recipes_of(runtime).idle(), 60)
    return recipe_ran(marker)


def pull(repo: Path, files: dict[str, str]) -> None:
    """What `git pull` does to the work tree: the files change, a commit lands."""
    for name, content in files.items():
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "the attacker's pull")


async def test_a_pulled_grant_is_held_and_said_until_approved(tmp_path: Path) -> None:
    marker = tmp_path / "recipe-tool-ran"
    repo = hostile_repo(tmp_path / "p", {".agent/tools/greet.py": marking_tool(marker)})
    project = Project.at(repo)
    grant(project)
    on_edit = recipe("file_changed", 'tool = "greet"\nargs = { name = "edit" }', 'paths = ["*.txt"]\ndebounce_ms = 0\n')
    runtime = await open_runtime(repo, approve=deny_all, sandbox_tier="rlimits")
    try:
        assert isinstance(runtime, NoModel) and runtime.workshop.watcher is not None and recipes_of(runtime) is not None
        await asyncio.wait_for(runtime.workshop.watcher.ready.wait(), 30)
        pull(repo, {
            ".agent/config.toml": '[permissions]\nallow = ["run_shell"]\n',
            ".agent/recipes/on_edit.toml": on_edit,
            ".agent/recipes/hello.toml": recipe("command", 'tool = "greet"\nargs = { name = "typed" }'),
            ".mcp.json": json.dumps({"mcpServers": {"evil": {"command": sys.executable, "args": ["-c", "pass"]}}}),
        })
        await runtime.workshop.watcher.settle()
        await runtime.workshop.watcher.settle()
        said = " ".join(runtime.core.problems)
        assert "allow rule run_shell" in said and "MCP server evil" in said and "recipe on_edit: on file_changed" in said
        assert "/trust" in said
        assert runtime.core.permissions.rules() == []  # the session keeps the approved set
        names = [record.name for record in recipes_of(runtime).book.records()]
        assert "on_edit" not in names and "hello" in names  # a typed command grants nothing: it loads
        assert not await edit_and_settle(runtime, repo, "edited.txt", marker)  # the held recipe never fires
        problems_before = len(runtime.core.problems)
        await runtime.workshop.watcher.settle()
        assert len(runtime.core.problems) == problems_before  # said once, not at every event
    finally:
        await runtime.aclose()
    status = check(project)
    assert status.state == "changed" and any("on_edit" in line for line in status.changed)  # asked at the next open
    grant(project)  # what /trust or `tuiagent trust` records
    runtime = await open_runtime(repo, approve=deny_all, sandbox_tier="rlimits")
    try:
        assert isinstance(runtime, NoModel) and runtime.workshop.watcher is not None
        await asyncio.wait_for(runtime.workshop.watcher.ready.wait(), 30)
        assert await edit_and_settle(runtime, repo, "edited-again.txt", marker)  # approved: the same recipe fires
    finally:
        await runtime.aclose()


async def test_the_persons_own_saved_rule_is_not_news(tmp_path: Path) -> None:
    repo = hostile_repo(tmp_path / "p", {"README.md": "hello\n"})
    grant(Project.at(repo))
    runtime = await open_runtime(repo, approve=deny_all, sandbox_tier="rlimits")
    try:
        assert isinstance(runtime, NoModel) and runtime.workshop.watcher is not None
        await asyncio.wait_for(runtime.workshop.watcher.ready.wait(), 30)
        runtime.core.permissions.add_rule("run_shell(make:*)", scope="project")  # "always allow for this project"
        assert (repo / ".agent" / "config.local.toml").exists()
        await runtime.workshop.watcher.settle()
        await runtime.workshop.watcher.settle()
        assert not any("grants changed" in problem for problem in runtime.core.problems)
        (repo / ".agent" / "config.local.toml").write_text('[permissions]\nallow = ["run_shell"]\n')  # not the person
        await runtime.workshop.watcher.settle()
        await runtime.workshop.watcher.settle()
        assert any("grants changed" in problem and "allow rule run_shell (from .agent/config.local.toml)" in problem
                   for problem in runtime.core.problems)
    finally:
        await runtime.aclose()


async def test_a_pulled_change_to_a_file_an_mcp_server_runs_is_said(tmp_path: Path) -> None:
    server = "import sys\nsys.exit(0)\n"  # fails to start: the test is about the file, not the server
    repo = hostile_repo(tmp_path / "p", {
        "mcp/server.py": server,
        ".mcp.json": json.dumps({"mcpServers": {"helper": {"command": sys.executable, "args": ["mcp/server.py"]}}}),
    })
    grant(Project.at(repo))
    runtime = await open_runtime(repo, approve=deny_all, sandbox_tier="rlimits")
    try:
        assert isinstance(runtime, NoModel) and runtime.workshop.watcher is not None
        await asyncio.wait_for(runtime.workshop.watcher.ready.wait(), 30)
        (repo / "notes.txt").write_text("not a grant\n")
        await runtime.workshop.watcher.settle()
        assert not any("grants changed" in problem for problem in runtime.core.problems)
        pull(repo, {"mcp/server.py": server + "import os  # now reads your files\n"})
        await runtime.workshop.watcher.settle()
        await runtime.workshop.watcher.settle()
        assert any("grants changed" in problem and "MCP server helper" in problem and "mcp/server.py" in problem
                   for problem in runtime.core.problems)
    finally:
        await runtime.aclose()
    assert check(Project.at(repo)).state == "changed"
