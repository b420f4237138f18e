"""`tuiagent -p` in text mode is a pipeline's stage: stdout carries the answer alone; tool lines, denials, notices and
warnings go to stderr, each once; messages use headless words (no input box to edit a prompt in)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fake_messages_api import FakeMessagesAPI, http_error, reply, text, tool_use
from tui_agent.cli import main


def test_stdout_is_the_answer_alone_and_each_tool_line_goes_to_stderr_once(
        repo: Path, api: FakeMessagesAPI, capsys: pytest.CaptureFixture[str]) -> None:
    api.enqueue(reply(text("Looking."), tool_use("read_file", {"path": "README.md"})),
                reply(tool_use("run_shell", {"command": "echo hi > made.txt"})),
                reply(tool_use("read_file", {"path": "missing.txt"})), reply(text("It is a demo project.")))
    assert main(["--project", str(repo), "-p", "what is this?"]) == 0
    out, err = capsys.readouterr()
    assert out == "Looking.\nIt is a demo project.\n"
    assert '[tool] read_file {"path": "README.md"}' in err
    lines = err.splitlines()
    assert [line.split(":")[0] for line in lines if "run_shell" in line] == [  # its start line, then its denial once
        '[tool] run_shell {"command"', "[denied] run_shell"]
    assert err.count("[tool] read_file failed") == 1
    assert not (repo / "made.txt").exists()


def test_a_failed_prompt_is_reported_in_headless_words(repo: Path, api: FakeMessagesAPI,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    api.enqueue(http_error(400, message="scripted refusal"))
    assert main(["--project", str(repo), "-p", "hi"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and "scripted refusal" in err
    assert "edit it" not in err and "send it again" not in err
