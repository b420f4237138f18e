"""Undo never writes through a folder that became a symbolic link (agent code can leave `dir -> .git` or
`dir -> ~/somewhere`, git-ignored): the undo is refused naming the link, and the link's target is left unchanged."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.gitrepo import git
from tui_agent.core.undo.ignored import IgnoredRecord, undo_ignored
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


class Kept:
    """The bytes kept before the run, by id (the checkpoints' object store's part undo uses)."""

    def __init__(self) -> None:
        self.blobs: dict[str, bytes] = {}

    def store(self, data: bytes) -> str:
        self.blobs[str(len(self.blobs))] = data
        return str(len(self.blobs) - 1)

    def stored(self, sha: str) -> bytes | None:
        return self.blobs.get(sha)


@pytest.mark.parametrize("where", ["git-dir", "outside"])
def test_undo_of_an_ignored_file_does_not_write_through_a_folder_now_linked(repo: Path, tmp_path: Path,
                                                                           where: str) -> None:
    target = repo / ".git" / "hooks" if where == "git-dir" else tmp_path / "outside"
    target.mkdir(parents=True, exist_ok=True)
    kept = Kept()
    removed = IgnoredRecord("build/pre-commit", "removed", None, kept.store(b"echo planted\n"))
    (repo / "build").symlink_to(target)  # the run removed build/ and left this link
    restored, left = undo_ignored(repo, kept, [[removed]])
    assert restored == [] and not (target / "pre-commit").exists()
    assert [item.path for item in left] == ["build/pre-commit"] and "build is now a symbolic link" in left[0].reason


def swapped_after_the_check(repo: Path, outside: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`dir` becomes a link to `outside` right after undo's last check of the path, before its write (the race a
    process running beside the undo can win): the real check runs (once before any change, once before the write),
    then the folder is swapped."""
    from tui_agent.core.undo import restore

    checked = restore.safe_path
    calls = []

    def check_then_swap(work_tree: Path, relative: str) -> Path:
        path = checked(work_tree, relative)
        calls.append(relative)
        if len(calls) == 2:
            (repo / "dir").rename(repo / "dir-moved")
            (repo / "dir").symlink_to(outside)
        return path

    monkeypatch.setattr(restore, "safe_path", check_then_swap)


def test_a_folder_linked_between_undos_check_and_its_write_is_never_written_through(
        repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    outside = tmp_path / "outside"
    (outside / "hooks").mkdir(parents=True)
    (repo / "dir" / "hooks").mkdir(parents=True)
    (repo / "dir" / "hooks" / "pre-commit").write_text("echo the project's file\n")
    git(repo, "add", "dir/hooks/pre-commit")
    git(repo, "commit", "-q", "-m", "dir")
    checkpoints = Checkpoints.open(repo)
    assert checkpoints is not None
    before = checkpoints.snapshot()
    (repo / "dir" / "hooks" / "pre-commit").write_text("echo the turn's edit\n")
    after = checkpoints.snapshot()
    changes = {path: entry for path, entry in checkpoints.entries(before, ["dir/hooks/pre-commit"]).items()}
    swapped_after_the_check(repo, outside, monkeypatch)
    with pytest.raises(RestoreError, match=r"dir is now a symbolic link .*move dir away"):
        apply_changes(checkpoints, changes)
    assert list(outside.rglob("*")) == [outside / "hooks"]  # nothing written outside
    assert after


def test_a_removal_through_a_folder_linked_after_the_check_deletes_nothing_outside(
        repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    outside = tmp_path / "outside"
    (outside / "hooks").mkdir(parents=True)
    (outside / "hooks" / "pre-commit").write_text("the person's own file\n")
    checkpoints = Checkpoints.open(repo)
    assert checkpoints is not None
    before = checkpoints.snapshot()
    (repo / "dir" / "hooks").mkdir(parents=True)
    (repo / "dir" / "hooks" / "pre-commit").write_text("made by the turn\n")
    after = checkpoints.snapshot()
    paths = checkpoints.changed_paths(before, after)
    assert paths == ["dir/hooks/pre-commit"]
    swapped_after_the_check(repo, outside, monkeypatch)
    with pytest.raises(RestoreError, match=r"dir is now a symbolic link"):
        apply_changes(checkpoints, {"dir/hooks/pre-commit": None})
    assert (outside / "hooks" / "pre-commit").read_text() == "the person's own file\n"
