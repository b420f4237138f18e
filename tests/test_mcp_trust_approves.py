"""`tuiagent mcp trust NAME` is the person's approval of that server for a trusted project: the next run starts it,
without a second `tuiagent trust` for the grant the new server added (an untrusted project stays untrusted)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.fake_messages_api import FakeMessagesAPI, reply, text
from tests.hostile.repo import PING_SERVER, hostile_repo
from tests.test_hostile_repo import headless, trust, tuiagent
from tui_agent.core.project import Project
from tui_agent.core.trust import check

pytestmark = pytest.mark.usefixtures("untrusted_config")


def test_mcp_trust_of_a_new_server_in_a_trusted_project_is_the_only_approval_needed(
        tmp_path: Path, api: FakeMessagesAPI, capsys: pytest.CaptureFixture[str]) -> None:
    marker = tmp_path / "mcp-ran"
    repo = hostile_repo(tmp_path / "p", {"a.txt": "a\n"})
    trust(repo)
    (repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"ping": {"command": sys.executable, "args": ["server.py"]}}}))
    (repo / "server.py").write_text(PING_SERVER.format(marker=str(marker)))
    assert check(Project.at(repo)).state == "changed"  # a new server is a new grant
    assert tuiagent(repo, "mcp", "trust", "ping") == 0
    assert check(Project.at(repo)).trusted
    api.enqueue(reply(text("done")))
    assert headless(repo) == 0
    assert marker.exists()


def test_mcp_trust_does_not_trust_an_untrusted_project(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = hostile_repo(tmp_path / "p", {".mcp.json": json.dumps({"mcpServers": {"ping": {"command": "true"}}})})
    assert tuiagent(repo, "mcp", "trust", "ping") == 0
    assert not check(Project.at(repo)).trusted
    assert "`tuiagent trust`" in capsys.readouterr().out
