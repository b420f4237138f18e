"""Diffs from the previous version and revert targets, shared by tool and recipe files (a real git repository)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.gitrepo import git, init_repo
from tui_agent.core.catalog.errors import PipelineError
from tui_agent.core.versioning.gitstore import CatalogGit
from tui_agent.core.versioning.versions import diff_since, revert_target

REL = ".agent/recipes/hello.toml"


def test_a_file_written_by_the_root_commit_diffs_whole_and_reverts_by_content(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo", commit=False)
    (repo / ".agent/recipes").mkdir(parents=True)
    (repo / REL).write_text("one = 1\n")
    git(repo, "add", REL)
    git(repo, "commit", "-q", "-m", "root")
    store = CatalogGit(repo)
    first = diff_since(store, REL, None, "recipe hello")  # no parent commit to diff against
    assert "+one = 1" in first and "-" not in first.split("@@")[-1]
    with pytest.raises(PipelineError, match="recipe hello has no earlier version"):
        revert_target(store, REL, b"one = 1\n", None, "recipe hello")

    (repo / REL).write_text("two = 2\n")
    git(repo, "commit", "-q", "-am", "second")
    assert revert_target(store, REL, b"two = 2\n", None, "recipe hello")[1] == b"one = 1\n"
    assert "-one = 1" in diff_since(store, REL, None, "recipe hello")
    with pytest.raises(PipelineError, match="cannot read recipe hello at nope"):
        revert_target(store, REL, None, "nope", "recipe hello")
