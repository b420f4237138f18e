"""Shared fixtures: real git repositories in temporary folders, and the strict fake Messages API server."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.fake_api import FakeMessagesAPI
from tests.gitrepo import init_repo, make_user_changes

if TYPE_CHECKING:
    from tests.scripted_model import ScriptedModel


@pytest.fixture(scope="session", autouse=True)
def trusted_test_folders(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Workspace trust for the suite: a config folder of this worker's own (never the person's ~/.config) in which
    pytest's base temp folder is trusted, so every project a test makes under tmp_path opens trusted, as before.
    Subprocesses (the CLI, tmux) inherit it through the environment."""
    from tui_agent.core.trust import trust_folder

    base = tmp_path_factory.getbasetemp()
    config = base / "xdg-config"
    config.mkdir(exist_ok=True)
    before = os.environ.get("XDG_CONFIG_HOME")
    os.environ["XDG_CONFIG_HOME"] = str(config)
    os.environ.setdefault("XDG_STATE_HOME", str(base / "xdg-state"))  # folders used without git keep state there
    os.environ.setdefault("XDG_CACHE_HOME", str(base / "xdg-cache"))  # the checkpoint index kept between processes
    trust_folder(str(base))
    yield config
    if before is None:
        os.environ.pop("XDG_CONFIG_HOME", None)
    else:
        os.environ["XDG_CONFIG_HOME"] = before


@pytest.fixture(scope="session")
def server_bytecode() -> None:
    """The test MCP servers' imports compiled where started servers keep their bytecode (outside any project): a cold
    first start compiles them there, seconds on a loaded machine, past a session's READY_WAIT_S."""
    from tests.mcp_helpers import warm_server_bytecode

    warm_server_bytecode()


@pytest.fixture
def untrusted_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A config folder with nothing trusted: every project opened in this test is untrusted (restricted)."""
    config = tmp_path / "untrusted-xdg"
    config.mkdir()
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    return config


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
def scripted() -> "ScriptedModel":
    """The in-process model (tests/scripted_model.py) under the default model's name: `scripted.enqueue(reply(...))`,
    then `make_app(repo, client=scripted)`. For tests whose subject is the loop or the UI, not the wire."""
    from tests.scripted_model import ScriptedModel
    from tui_agent.core.agent.pricing import default_model

    return ScriptedModel(model=default_model())


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
