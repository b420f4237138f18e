"""Shared fixtures: real git repositories in temporary folders."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.gitrepo import init_repo, make_user_changes


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A real git repo with one commit."""
    return init_repo(tmp_path / "project")


@pytest.fixture
def dirty_repo(repo: Path) -> Path:
    """A real git repo with a staged change, an unstaged change and an untracked file."""
    make_user_changes(repo)
    return repo
