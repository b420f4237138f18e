"""Real repositories whose `.gitignore` ignores `.agent` or every dot-file (`.*`, as tabulate's does): a turn is still
checkpointed, so its diff, /undo and the catalog's tools work as in any other repository (issue 35)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.agent_helpers import agent_runtime, run_turn
from tests.catalog_support import tool_source
from tests.fake_messages_api import FakeMessagesAPI, reply, text, tool_use
from tests.gitrepo import git
from tui_agent.core.runtime_state import catalog_of

IGNORES = [".*\n!.gitignore\n", ".agent\n", ".agent/\n"]


@pytest.mark.parametrize("rules", IGNORES)
async def test_a_gitignore_that_ignores_the_agent_folder_changes_nothing_in_undo_and_diffs(
        repo: Path, api: FakeMessagesAPI, rules: str) -> None:
    (repo / ".gitignore").write_text(rules)
    git(repo, "add", ".gitignore")
    git(repo, "commit", "-q", "-m", "ignore dot-files")
    async with agent_runtime(repo, api) as runtime:
        api.enqueue(reply(tool_use("create_tool", {"name": "shout", "source": tool_source("shout")})),
                    reply(tool_use("write_file", {"path": "one.txt", "content": "1\n"})),
                    reply(tool_use("run_shell", {"command": "echo two > two.txt"})), reply(text("ok")))
        await run_turn(runtime, "write two files and a tool")
        assert not [p for p in runtime.core.undo.problems if "cannot be undone" in p], runtime.core.undo.problems
        assert catalog_of(runtime).get("shout") is not None
        diff = await runtime.core.undo.turn_diff(runtime.core.session)
        assert "+1" in diff and "+two" in diff and ".agent" not in diff
        result = await runtime.core.undo.undo_last(runtime.core.session)
        assert result.ok, result.message
        assert not (repo / "one.txt").exists() and not (repo / "two.txt").exists()
        assert catalog_of(runtime).get("shout") is None


@pytest.mark.parametrize("rules", IGNORES)
def test_a_checkpoint_leaves_the_agent_folder_out_whatever_the_gitignore_says(repo: Path, rules: str) -> None:
    from tui_agent.core.versioning.checkpoints import Checkpoints

    (repo / ".gitignore").write_text(rules)
    (repo / ".agent" / "tools").mkdir(parents=True)
    (repo / ".agent" / "tools" / "t.py").write_text("x = 1\n")
    checkpoints = Checkpoints.open(repo)
    assert checkpoints is not None
    before = checkpoints.snapshot()
    (repo / "new.txt").write_text("new\n")
    (repo / ".agent" / "tools" / "t.py").write_text("x = 2\n")
    after = checkpoints.snapshot()
    assert checkpoints.changed_paths(before, after) == ["new.txt"]
    assert ".agent" not in git(repo, "ls-tree", "-r", "--name-only", after)


def test_a_project_in_a_subfolder_with_wildcard_characters_keeps_its_agent_folder_out(repo: Path) -> None:
    from tui_agent.core.versioning.checkpoints import Checkpoints

    (repo / ".gitignore").write_text(".*\n")
    project = repo / "pkg[1]*"
    (project / ".agent").mkdir(parents=True)
    (project / ".agent" / "t.py").write_text("x = 1\n")
    (repo / "pkg1x" / ".agent").mkdir(parents=True)  # what `pkg[1]*` would match as a wildcard
    (repo / "pkg1x" / ".agent" / "u.py").write_text("y = 1\n")
    checkpoints = Checkpoints.open(project)
    assert checkpoints is not None
    before = checkpoints.snapshot()
    (project / "new.txt").write_text("new\n")
    (project / ".agent" / "t.py").write_text("x = 2\n")
    assert checkpoints.changed_paths(before, checkpoints.snapshot()) == ["pkg[1]*/new.txt"]
