"""Headless `tuiagent -p "/name args"`: a Markdown command file's prompt is sent, its arguments in place."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fake_messages_api import FakeMessagesAPI, reply, text
from tui_agent.cli import main


def test_a_headless_slash_prompt_naming_a_command_file_sends_its_body(repo: Path, api: FakeMessagesAPI, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (repo / ".agent" / "commands").mkdir(parents=True)
    (repo / ".agent" / "commands" / "fix.md").write_text("---\ndescription: fix an issue\n---\nFix issue #$1 ($ARGUMENTS).\n")
    api.enqueue(reply(text("fixed")), reply(text("plain")))
    assert main(["--project", str(repo), "-p", "/fix 42 quickly"]) == 0
    sent = str(api.requests[-1].messages[-1])
    assert "Fix issue #42 (42 quickly)." in sent and "description" not in sent
    assert main(["--project", str(repo), "-p", "/usr/bin/env is a path"]) == 0
    assert "/usr/bin/env is a path" in str(api.requests[-1].messages[-1])
