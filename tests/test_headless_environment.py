"""`tuiagent -p` takes the environment's git glance (status, recent commits) in a thread while the runtime opens: the
first request still carries the project's state as it was when the run started."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fake_messages_api import FakeMessagesAPI, reply, text
from tests.gitrepo import git
from tui_agent.cli import main
from tui_agent.core.agent.instructions import Environment, glance_early


def test_the_first_headless_request_carries_the_status_and_commits(repo: Path, api: FakeMessagesAPI,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "README.md").write_text("changed\n")
    (repo / "new.txt").write_text("new\n")
    api.enqueue(reply(text("Hello.")))
    assert main(["--project", str(repo), "-p", "hi"]) == 0
    environment = api.requests[0].system_text.split("# Environment")[1]
    assert " M README.md" in environment and "?? new.txt" in environment
    subject = git(repo, "log", "-1", "--format=%s").strip()
    assert subject and subject in environment


def test_an_early_glance_is_taken_once_then_the_environment_is_read_anew(repo: Path) -> None:
    glance_early(repo)
    first = Environment.capture(repo).text()
    (repo / "later.txt").write_text("made after the first capture\n")
    second = Environment.capture(repo).text()
    assert "later.txt" not in first and "?? later.txt" in second  # a new conversation does not reuse the glance
