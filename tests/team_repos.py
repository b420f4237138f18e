"""Helpers (no tests) for the team-git tests: real repositories holding the tool `double`, alone, on two diverged
branches (mine and a teammate's), or merged keeping mine."""

from __future__ import annotations

from pathlib import Path

from tests.catalog_support import tool_source
from tests.gitrepo import git, init_repo


def with_double(repo: Path, message: str = "add double") -> Path:
    """`.agent/tools/double.py` written and committed in the repository `repo`; the tool's path."""
    tool = repo / ".agent" / "tools" / "double.py"
    tool.parent.mkdir(parents=True)
    tool.write_text(tool_source("double"))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return tool


def new_repo_with_double(repo: Path) -> Path:
    """A new repository at `repo` whose second commit adds `double`; the tool's path."""
    init_repo(repo)
    return with_double(repo)


def diverged_from_a_teammate(repo: Path) -> Path:
    """`double` changed on the branch `teammate` (by Tea Mate) and differently on `main` (checked out, by Dev)."""
    tool = new_repo_with_double(repo)
    git(repo, "checkout", "-q", "-b", "teammate")
    tool.write_text(tool_source("double", "return x * 2"))
    git(repo, "-c", "user.name=Tea Mate", "commit", "-q", "-am", "teammate's double")
    git(repo, "checkout", "-q", "main")
    tool.write_text(tool_source("double", "return x + x"))
    git(repo, "commit", "-q", "-am", "my double")
    return tool


def merged_with_a_teammate(repo: Path) -> Path:
    """The diverged branches merged, the conflict resolved keeping mine: four versions with `--full-history`."""
    tool = diverged_from_a_teammate(repo)
    git(repo, "merge", "teammate", check=False)
    tool.write_text(tool_source("double", "return x + x"))  # keep mine
    git(repo, "commit", "-q", "-am", "merge teammate, keep mine")
    return tool
