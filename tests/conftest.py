"""Shared fixtures: real git repositories in temporary folders, and the strict fake Messages API server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fake_api import FakeMessagesAPI
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


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeMessagesAPI]:
    """The local Messages API server, with ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL pointing the SDK at it.

    Strict: a request the real API would refuse gets its 400, and the test fails at teardown
    (InvalidRequestsSent) unless it took the refusals with `api.take_violations()`."""
    with FakeMessagesAPI() as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
        yield server
