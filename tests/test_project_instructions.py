"""AGENTS.md, CLAUDE.md, the person's own instructions and the environment block in the system prompt, once per session."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.agent_helpers import agent_runtime, run_turn
from tests.fake_messages_api import FakeMessagesAPI, reply, text
from tests.gitrepo import git
from tui_agent.core.agent.instructions import Environment, init_prompt, project_instructions


@pytest.fixture
def personal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The person's AGENTS.md in the config folder in force (a temporary one when none is set)."""
    if not os.environ.get("XDG_CONFIG_HOME"):
        monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    path = Path(os.environ["XDG_CONFIG_HOME"]) / "tuiagent" / "AGENTS.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("Always answer in British English.\n")
    yield path
    path.unlink(missing_ok=True)


async def test_instructions_and_environment_are_in_the_system_prompt_and_stay_put(repo: Path, personal: Path) -> None:
    (repo / "AGENTS.md").write_text("Run the tests with `make check`.\n")
    (repo / "CLAUDE.md").write_text("Never edit generated/.\n")
    git(repo, "add", "AGENTS.md", "CLAUDE.md")
    git(repo, "commit", "-qm", "Add agent instructions")
    (repo / "README.md").write_text("changed\n")
    with FakeMessagesAPI() as api:
        api.enqueue(reply(text("one")), reply(text("two")), reply(text("three")))
        async with agent_runtime(repo, api) as runtime:
            await run_turn(runtime, "first")
            (repo / "AGENTS.md").write_text("Run the tests with `tox`.\n")  # picked up by the next session, not this one
            await run_turn(runtime, "second")
        async with agent_runtime(repo, api) as runtime:
            await run_turn(runtime, "third")
    first, second, third = (request.system_text for request in api.requests)
    assert first == second  # the cached prefix does not move within a session
    assert "Run the tests with `make check`." in first and "Never edit generated/." in first
    assert "Always answer in British English." in first
    assert first.index("British English") < first.index("make check") < first.index("Catalog") < first.index("# Environment")
    branch = git(repo, "rev-parse", "--abbrev-ref", "HEAD").strip()
    assert f"- Git branch: {branch}" in first and "Add agent instructions" in first and " M README.md" in first
    assert "- Working directory: " + str(repo) in first and "- Date: " in first and ".agent/" not in first.split("# Environment")[1].replace("; .agent/ left out", "")
    assert "Run the tests with `tox`." in third and "make check" not in third


def test_instruction_files_are_read_only_inside_the_project(repo: Path, tmp_path: Path, personal: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("AWS_SECRET=hunter2\n")
    os.symlink(secret, repo / "AGENTS.md")
    (repo / "CLAUDE.md").write_text("x" * 50_000)
    text = project_instructions(repo)
    assert "hunter2" not in text and "British English" in text
    assert "only the first 40000 characters" in text
    personal.unlink()
    (repo / "CLAUDE.md").unlink()
    assert project_instructions(repo) == ""


def test_a_claude_md_identical_to_agents_md_is_read_once(repo: Path) -> None:
    (repo / "AGENTS.md").write_text("Use ruff.\n")
    (repo / "CLAUDE.md").write_text("Use ruff.\n")
    assert project_instructions(repo).count("Use ruff.") == 1


def test_environment_outside_git_and_the_init_prompt(tmp_path: Path) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    environment = Environment.capture(folder).text()
    assert "Not a git repository" in environment and "- Platform: " in environment
    prompt = init_prompt("focus on the test layout")
    assert "AGENTS.md" in prompt and prompt.endswith("The person adds: focus on the test layout")
