"""The checkpoint index is kept between processes: a new tuiagent's first snapshot hashes only what changed, not
every untracked file again, and still takes what the saved index cannot know (pruned objects, a file the person
force-added past .gitignore)."""

from __future__ import annotations

import os
import resource
import time
from pathlib import Path

import pytest

from tests.gitrepo import git
from tui_agent.core.versioning.checkpoints import Checkpoints

FILES = 4000


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def snapshot_cpu(repo: Path) -> tuple[str, float]:
    """A new Checkpoints (what a new process makes) and its first snapshot: the tree, and the CPU git spent."""
    checkpoints = Checkpoints.open(repo)
    assert checkpoints is not None
    before = children_cpu()
    tree = checkpoints.snapshot()
    return tree, children_cpu() - before


def untracked_tree(repo: Path) -> None:
    for number in range(FILES):
        folder = repo / "gen" / f"d{number // 100}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"f{number % 100}.txt").write_text(f"file {number}\n" * 40)
        past = time.time() - 60  # older than any index written next: git re-hashes "racily clean" files (same second)
        os.utime(folder / f"f{number % 100}.txt", (past, past))


def test_a_new_process_does_not_hash_every_untracked_file_again(repo: Path, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    untracked_tree(repo)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    first, _ = snapshot_cpu(repo)  # hashes and stores every file once
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "other-cache"))
    unsaved, hashing = snapshot_cpu(repo)  # what every start did before: hash the 4,000 files again
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    (repo / "gen/d0/f0.txt").write_text("changed since\n")
    (repo / "gen/new.txt").write_text("new\n")
    saved, reusing = snapshot_cpu(repo)
    assert first == unsaved != saved
    assert git(repo, "show", f"{saved}:gen/d0/f0.txt") == "changed since\n"
    assert git(repo, "show", f"{saved}:gen/new.txt") == "new\n"
    assert reusing < hashing / 2, (reusing, hashing)


def test_a_saved_index_naming_pruned_objects_is_replaced(repo: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    (repo / "notes.txt").write_text("untracked notes\n")
    snapshot_cpu(repo)
    blob = git(repo, "hash-object", "notes.txt").strip()
    (repo / ".git/objects" / blob[:2] / blob[2:]).unlink()  # what `git gc` does to an old unreferenced blob
    tree, _ = snapshot_cpu(repo)
    assert git(repo, "show", f"{tree}:notes.txt") == "untracked notes\n"


def test_a_file_force_added_past_gitignore_after_the_save_is_in_the_next_snapshot(
        repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    (repo / ".gitignore").write_text("*.log\n")
    (repo / "build.log").write_text("kept by the person\n")
    first, _ = snapshot_cpu(repo)
    assert "build.log" not in git(repo, "ls-tree", "-r", "--name-only", first)
    git(repo, "add", "-f", "build.log")
    tree, _ = snapshot_cpu(repo)
    assert git(repo, "show", f"{tree}:build.log") == "kept by the person\n"
