"""Headless `tuiagent -p`: text, json and stream-json output, exit codes, approval flags, --continue and --resume."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fake_messages_api import FakeMessagesAPI, http_error, reply, text, tool_use
from tui_agent.cli import main


def tuiagent(repo: Path, *args: str) -> int:
    return main(["--project", str(repo), *args])


def test_text_output_prints_the_assistant_text_and_a_line_per_tool_call(repo: Path, api: FakeMessagesAPI, capsys: pytest.CaptureFixture[str]) -> None:
    api.enqueue(reply(text("Looking at the readme."), tool_use("read_file", {"path": "README.md"})), reply(text("It is a demo project.")))
    assert tuiagent(repo, "-p", "what is this?") == 0
    out = capsys.readouterr().out
    assert out == 'Looking at the readme.\n[tool] read_file {"path": "README.md"}\nIt is a demo project.\n'


def test_failure_exits_non_zero_with_the_reason(repo: Path, api: FakeMessagesAPI, capsys: pytest.CaptureFixture[str]) -> None:
    api.enqueue(http_error(401))
    assert tuiagent(repo, "-p", "hello") == 1
    assert "ANTHROPIC_API_KEY" in capsys.readouterr().err


def test_json_output_is_one_object(repo: Path, api: FakeMessagesAPI, capsys: pytest.CaptureFixture[str]) -> None:
    api.enqueue(reply(tool_use("list_files", {"pattern": "*.md"})), reply(text("One markdown file.")))
    assert tuiagent(repo, "-p", "list md", "--output-format", "json") == 0
    result = json.loads(capsys.readouterr().out)
    assert result["type"] == "result" and result["is_error"] is False and result["result"] == "One markdown file."
    assert result["tool_calls"][0]["name"] == "list_files" and result["tool_calls"][0]["is_error"] is False
    assert result["usage"]["requests"] == 2 and result["turn_usage"]["requests"] == 2 and (repo / f".agent/sessions/{result['session_id']}.jsonl").is_file()


def test_stream_json_is_one_line_per_event(repo: Path, api: FakeMessagesAPI, capsys: pytest.CaptureFixture[str]) -> None:
    api.enqueue(reply(text("Hi there, streaming.")))
    assert tuiagent(repo, "-p", "hi", "--output-format", "stream-json") == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    types = [line["type"] for line in lines]
    assert types[0] == "turn_started" and "text_delta" in types and "usage" in types
    assert types[-2:] == ["turn_finished", "result"] and lines[-1]["result"] == "Hi there, streaming."


def test_without_flags_approval_needing_calls_are_denied_and_reported(repo: Path, api: FakeMessagesAPI, capsys: pytest.CaptureFixture[str]) -> None:
    api.enqueue(reply(tool_use("run_shell", {"command": "echo hi > made.txt"})), reply(text("could not")))
    assert tuiagent(repo, "-p", "make a file") == 0
    result = api.requests[1].tool_results()[0]
    assert result["is_error"] and "denied" in result["content"] and "--yes" in result["content"]
    assert "[denied] run_shell" in capsys.readouterr().err and not (repo / "made.txt").exists()


def test_allow_approves_that_tool_only(repo: Path, api: FakeMessagesAPI) -> None:
    api.enqueue(reply(tool_use("run_shell", {"command": "echo hi > made.txt"}), tool_use("write_file", {"path": "other.txt", "content": "x"})),
                reply(text("half done")))
    assert tuiagent(repo, "-p", "make files", "--allow", "run_shell") == 0
    shell, write = api.requests[1].tool_results()
    assert not shell.get("is_error") and "exit code: 0" in shell["content"] and (repo / "made.txt").read_text() == "hi\n"
    assert write["is_error"] and not (repo / "other.txt").exists()


def test_no_model_configured_says_how(repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    assert tuiagent(repo, "-p", "hello") == 2
    assert "ANTHROPIC_API_KEY" in capsys.readouterr().err


def test_continue_and_resume_send_the_earlier_conversation(repo: Path, api: FakeMessagesAPI, capsys: pytest.CaptureFixture[str]) -> None:
    api.enqueue(reply(text("first answer")), reply(text("second answer")), reply(text("third answer")), reply(text("fresh")))
    assert tuiagent(repo, "-p", "first", "--output-format", "json") == 0
    session_id = json.loads(capsys.readouterr().out)["session_id"]
    assert tuiagent(repo, "-p", "second", "--continue") == 0
    assert tuiagent(repo, "-p", "third", "--resume", session_id) == 0
    assert tuiagent(repo, "-p", "new") == 0
    texts = [[block["text"] for m in r.messages for block in m["content"]] for r in api.requests]
    assert texts[1] == ["first", "first answer", "second"]
    assert texts[2] == ["first", "first answer", "second", "second answer", "third"]
    assert texts[3] == ["new"]
    capsys.readouterr()
    assert tuiagent(repo, "-p", "x", "--resume", "no-such-session") == 2
    assert "no session" in capsys.readouterr().err


def test_model_comes_from_the_flag_then_the_config(repo: Path, api: FakeMessagesAPI) -> None:
    (repo / ".agent").mkdir()
    (repo / ".agent/config.toml").write_text('model = "claude-haiku-4-5"\n')
    api.enqueue(reply(text("a")), reply(text("b")))
    assert tuiagent(repo, "-p", "one") == 0
    assert tuiagent(repo, "-p", "two", "--model", "claude-opus-4-5") == 0
    assert [r.body["model"] for r in api.requests] == ["claude-haiku-4-5", "claude-opus-4-5"]


def test_an_unreachable_server_gets_a_clear_message(repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("ANTHROPIC_BASE_URL", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    assert tuiagent(repo, "-p", "hello") == 1
    assert f"cannot reach the model server at http://127.0.0.1:{port}" in capsys.readouterr().err


def test_the_turns_project_file_edits_are_reported(repo: Path, api: FakeMessagesAPI, capsys: pytest.CaptureFixture[str]) -> None:
    api.enqueue(reply(tool_use("write_file", {"path": "notes.txt", "content": "new\n"})), reply(text("wrote it")))
    assert tuiagent(repo, "-p", "write notes", "--yes", "--output-format", "json") == 0
    assert json.loads(capsys.readouterr().out)["edited_files"] == ["notes.txt"]
    api.enqueue(reply(tool_use("write_file", {"path": "notes.txt", "content": "newer\n"})), reply(text("again")))
    assert tuiagent(repo, "-p", "rewrite notes", "--yes") == 0
    assert "[edited] 1 project file(s): notes.txt" in capsys.readouterr().err
