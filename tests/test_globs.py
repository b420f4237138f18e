"""One glob dialect (gitignore's, through pathspec) for recipe triggers, DEPENDS_ON and protected paths."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tui_agent.core.catalog.drift import DriftChecker
from tui_agent.core.globs import glob_problem, matches, matching_paths, rooted
from tui_agent.core.project import Project
from tui_agent.core.sandbox import protected


def make(root: Path, *files: str) -> None:
    for name in files:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(name)


def test_gitignore_semantics_negation_and_folders() -> None:
    assert matches("pkg/a.py", ["*.py", "!pkg/gen_*.py"]) and not matches("pkg/gen_x.py", ["*.py", "!pkg/gen_*.py"])
    assert matches("build/out/x.o", ["build/"]) and not matches("build", ["build/"])
    assert matches("a/b/c.txt", ["/a"]) and not matches("x/a/c.txt", ["/a"])
    assert not matches("anything", []) and not matches("a[", ["a["])
    assert glob_problem("/etc/passwd") is not None and glob_problem("!*.tmp") is None and glob_problem("\\") is not None


def test_a_walk_lists_a_matching_folder_not_its_contents_and_never_follows_a_link(tmp_path: Path) -> None:
    make(tmp_path, "secrets/x/y.txt", "secrets/k", "keys/deep/a.pem", "b.pem", ".git/a.pem", "docs/readme.md")
    os.symlink("/etc", tmp_path / "secrets" / "outside")
    assert matching_paths(tmp_path, ["secrets/*"]) == ["secrets/k", "secrets/outside", "secrets/x"]
    assert matching_paths(tmp_path, ["secrets/*"], files_only=True) == ["secrets/k", "secrets/x/y.txt"]
    assert matching_paths(tmp_path, ["*.pem"]) == ["b.pem", "keys/deep/a.pem"], ".git is never walked"
    assert matching_paths(tmp_path, [rooted("*.pem")]) == ["b.pem"]
    assert matching_paths(tmp_path, ["**"], limit=2) == ["b.pem", "docs"]
    assert matching_paths(tmp_path, ["../*", "a["]) == []


def test_depends_on_reads_the_same_in_the_work_tree_and_in_a_commit(repo: Path) -> None:
    """`*.json` is the root's JSON files on both sides (the commit side used to match `sub/b.json` too)."""
    make(repo, "a.json", "sub/b.json", "data/c.json")
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "data"], cwd=repo, check=True)
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, check=True, capture_output=True, text=True).stdout.strip()
    checker = DriftChecker(repo)
    assert checker.watched_files(commit, ["*.json"], []) == ["a.json"]
    assert checker.watched_files(None, ["*.json"], []) == ["a.json"]
    assert checker.watched_files(commit, ["data/*.json", "**/b.json"], []) == ["data/c.json", "sub/b.json"]


def test_protected_globs_bind_what_the_write_guard_refuses(repo: Path) -> None:
    """`*.pem` protects a key at any depth both when binding existing files and when refusing a write (the binding used
    to see the root's keys only)."""
    Project.at(repo).config_path.parent.mkdir(parents=True, exist_ok=True)
    Project.at(repo).config_path.write_text('[sandbox]\nprotected = ["*.pem", "/vault"]\n')
    make(repo, "keys/deep/a.pem", "vault/token", "src/vault/ok.txt")
    assert matching_paths(repo, protected.user_globs(repo)) == ["keys/deep/a.pem", "vault"]
    assert protected.matches_protected(repo, "keys/deep/a.pem") == "keys/deep/a.pem"
    assert protected.matches_protected(repo, "new/deeper/b.pem") == "*.pem"
    assert protected.matches_protected(repo, "vault/new") == "vault"
    assert protected.matches_protected(repo, "src/vault/ok.txt") is None
