"""Undo never writes through a folder that became a symbolic link (agent code can leave `dir -> .git` or
`dir -> ~/somewhere`, git-ignored): the undo is refused naming the link, and the link's target is left unchanged."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.gitrepo import git
from tui_agent.core.undo.restore import RestoreError, apply_changes
from tui_agent.core.versioning.checkpoints import Checkpoints


def linked_after_the_turn(repo: Path, target: Path) -> tuple[Checkpoints, dict[str, tuple[str, str] | None]]:
    """A tracked `dir/hooks/pre-commit`; the turn removed `dir` and left `dir` as a git-ignored link to `target`."""
    (repo / "dir" / "hooks").mkdir(parents=True)
    (repo / "dir" / "hooks" / "pre-commit").write_text("echo the project's file\n")
    (repo / ".gitignore").write_text("/dir\n")
    git(repo, "add", "-f", ".gitignore", "dir/hooks/pre-commit")
    git(repo, "commit", "-q", "-m", "dir")
    checkpoints = Checkpoints.open(repo)
    assert checkpoints is not None
    before = checkpoints.snapshot()
    (repo / "dir" / "hooks" / "pre-commit").unlink()
    (repo / "dir" / "hooks").rmdir()
    (repo / "dir").rmdir()
    (repo / "dir").symlink_to(target)
    after = checkpoints.snapshot()
    paths = checkpoints.changed_paths(before, after)
    assert paths == ["dir/hooks/pre-commit"]  # the link itself is ignored: not part of the turn
    entries = checkpoints.entries(before, paths)
    return checkpoints, {path: entries.get(path) for path in paths}


@pytest.mark.parametrize("where", ["git-dir", "outside"])
def test_undo_refuses_to_write_through_a_folder_now_linked(repo: Path, tmp_path: Path, where: str) -> None:
    target = repo / ".git" if where == "git-dir" else tmp_path / "outside"
    (target / "hooks").mkdir(parents=True, exist_ok=True)
    hook = target / "hooks" / "pre-commit"
    checkpoints, changes = linked_after_the_turn(repo, target)
    with pytest.raises(RestoreError, match=r"dir is now a symbolic link .*move dir away"):
        apply_changes(checkpoints, changes)
    assert not hook.exists()  # no hook planted in .git, nothing written outside
    assert (repo / "dir").is_symlink()
