"""Headless `tuiagent -p`: text, json and stream-json output, exit codes, approval flags, --continue and --resume."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from tests.pty_output import on_a_terminal
from tests.fake_messages_api import FakeMessagesAPI, http_error, reply, text, tool_use
from tui_agent.cli import main
from tui_agent.core.agent.pricing import price_for


def tuiagent(repo: Path, *args: str) -> int:
    return main(["--project", str(repo), *args])


def test_text_output_prints_the_assistant_text_and_a_line_per_tool_call(repo: Path, api: FakeMessagesAPI, capsys: pytest.CaptureFixture[str]) -> None:
    api.enqueue(reply(text("Looking at the readme."), tool_use("read_file", {"path": "README.md"})), reply(text("It is a demo project.")))
    assert tuiagent(repo, "-p", "what is this?") == 0
    out, err = capsys.readouterr()
    assert out == "Looking at the readme.\nIt is a demo project.\n"  # the answer alone: tool lines go to stderr
    assert err.splitlines()[0] == '[tool] read_file {"path": "README.md"}'


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
    assert result["subtype"] == "success" and result["num_turns"] == 2 and result["duration_ms"] >= 0
    assert result["session_usage"]["requests"] == 2 and (repo / f".agent/sessions/{result['session_id']}.jsonl").is_file()
    # usage under the API's names, with the cache figures the server reported, and the cost at the cache prices
    write, read = sum(u.write for u in api.cache_log), sum(u.read for u in api.cache_log)
    assert result["usage"].items() >= {"input_tokens": sum(u.uncached for u in api.cache_log), "cache_creation_input_tokens": write,
                                       "cache_read_input_tokens": read, "output_tokens": result["usage"]["output_tokens"]}.items()
    assert result["usage"]["cache_creation"] == {"ephemeral_5m_input_tokens": write, "ephemeral_1h_input_tokens": 0}
    assert read > 0 and write > 0
    price = price_for(result["model"])
    assert price is not None and result["total_cost_usd"] == pytest.approx(
        (result["usage"]["input_tokens"] * price.input + write * price.input * 1.25 + read * price.input * 0.1
         + result["usage"]["output_tokens"] * price.output) / 1e6, abs=1e-6)


def test_stream_json_follows_claude_codes_event_schema(repo: Path, api: FakeMessagesAPI, capsys: pytest.CaptureFixture[str]) -> None:
    api.enqueue(reply(text("Listing."), tool_use("list_files", {"pattern": "*.md"})), reply(text("Hi there, streaming.")))
    assert tuiagent(repo, "-p", "hi", "--output-format", "stream-json") == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [line["type"] for line in lines] == ["system", "assistant", "user", "assistant", "result"]
    init, first, results, last, result = lines
    assert init["subtype"] == "init" and init["cwd"] == str(repo) and "read_file" in init["tools"] and init["permissionMode"] == "default"
    assert {line["session_id"] for line in lines} == {init["session_id"]}
    assert first["message"]["role"] == "assistant" and [b["type"] for b in first["message"]["content"]] == ["text", "tool_use"]
    assert first["message"]["usage"]["cache_creation_input_tokens"] == api.cache_log[0].write and first["parent_tool_use_id"] is None
    call_id = first["message"]["content"][1]["id"]
    assert results["message"]["content"][0]["type"] == "tool_result" and results["message"]["content"][0]["tool_use_id"] == call_id
    assert last["message"]["content"] == [{"type": "text", "text": "Hi there, streaming."}]
    assert result["subtype"] == "success" and result["result"] == "Hi there, streaming." and result["num_turns"] == 2
    assert set(result) >= {"duration_ms", "total_cost_usd", "usage", "is_error", "session_id"}
    # what Claude Code's published types require of each line
    assert set(init) >= {"uuid", "session_id", "apiKeySource", "claude_code_version", "cwd", "tools", "mcp_servers",
                         "model", "permissionMode", "slash_commands", "output_style", "skills", "plugins"}
    assert set(first) >= {"uuid", "session_id", "message", "parent_tool_use_id"}
    assert set(first["message"]) >= {"id", "type", "role", "model", "content", "stop_reason", "stop_sequence", "usage",
                                     "container", "context_management", "diagnostics", "stop_details"}
    assert set(first["message"]["usage"]) >= {"cache_creation", "server_tool_use", "service_tier", "speed"}
    assert first["message"]["stop_reason"] == "tool_use" and last["message"]["stop_reason"] == "end_turn"
    assert set(results) >= {"uuid", "session_id", "message", "parent_tool_use_id"}
    assert set(result) >= {"uuid", "duration_api_ms", "stop_reason", "modelUsage", "permission_denials", "num_turns"}
    usage = result["modelUsage"][result["model"]]
    assert usage["inputTokens"] == result["usage"]["input_tokens"] and usage["costUSD"] == result["total_cost_usd"]
    assert len({line["uuid"] for line in lines}) == len(lines)


def test_a_failed_run_has_an_error_subtype(repo: Path, api: FakeMessagesAPI, capsys: pytest.CaptureFixture[str]) -> None:
    api.enqueue(http_error(400, message="scripted refusal"))
    assert tuiagent(repo, "-p", "hi", "--output-format", "json") == 1
    result = json.loads(capsys.readouterr().out)
    assert result["subtype"] == "error_during_execution" and result["is_error"] and "scripted refusal" in result["error"]
    assert result["num_turns"] == 0 and result["usage"]["input_tokens"] == 0


def test_without_flags_approval_needing_calls_are_denied_and_reported(repo: Path, api: FakeMessagesAPI, capsys: pytest.CaptureFixture[str]) -> None:
    api.enqueue(reply(tool_use("run_shell", {"command": "echo hi > made.txt"})), reply(text("could not")))
    assert tuiagent(repo, "-p", "make a file") == 0
    result = api.requests[1].tool_results()[0]
    assert result["is_error"] and "denied" in result["content"] and "--yes" in result["content"]
    assert "[denied] run_shell" in capsys.readouterr().err and not (repo / "made.txt").exists()


def test_json_lists_the_permission_denials(repo: Path, api: FakeMessagesAPI, capsys: pytest.CaptureFixture[str]) -> None:
    api.enqueue(reply(tool_use("run_shell", {"command": "echo hi > made.txt"})), reply(text("could not")))
    assert tuiagent(repo, "-p", "make a file", "--output-format", "json") == 0
    result = json.loads(capsys.readouterr().out)
    call_id = api.requests[1].messages[1]["content"][0]["id"]
    assert result["permission_denials"] == [{"tool_name": "run_shell", "tool_use_id": call_id, "tool_input": {"command": "echo hi > made.txt"}}]


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
    assert tuiagent(repo, "-p", "two", "--model", "claude-sonnet-4-6") == 0
    assert [r.body["model"] for r in api.requests] == ["claude-haiku-4-5", "claude-sonnet-4-6"]


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


def test_edited_files_are_what_the_turn_changed_not_what_was_changed_before_it(
        repo: Path, api: FakeMessagesAPI, capsys: pytest.CaptureFixture[str]) -> None:
    """`edited_files` comes from the undo checkpoints around the turn: a file changed before the turn is not listed,
    nor `.agent/` (the session file), and a turn that edits nothing lists nothing."""
    (repo / "README.md").write_text("changed before the turn\n")
    api.enqueue(reply(tool_use("write_file", {"path": "docs/notes.txt", "content": "new\n"})), reply(text("wrote it")))
    assert tuiagent(repo, "-p", "write notes", "--yes", "--output-format", "json") == 0
    assert json.loads(capsys.readouterr().out)["edited_files"] == ["docs/notes.txt"]
    api.enqueue(reply(text("nothing to do")))
    assert tuiagent(repo, "-p", "rest", "--output-format", "json") == 0
    assert json.loads(capsys.readouterr().out)["edited_files"] == []


def test_escape_sequences_in_the_reply_are_shown_on_a_terminal_and_kept_in_a_pipe(repo: Path, api: FakeMessagesAPI,
                                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    hostile = "title\x1b]0;PWNED\x07 erase\x1b[2J done"
    api.enqueue(reply(text(hostile)), reply(text(hostile)))
    assert tuiagent(repo, "-p", "hi") == 0
    assert capsys.readouterr().out == hostile + "\n"  # a pipe gets the bytes as they are (scripts may want them)
    env = {**os.environ, "ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": api.base_url}
    code, shown = on_a_terminal([sys.executable, "-m", "tui_agent.cli", "--project", str(repo), "-p", "hi"], env)
    assert code == 0
    assert "title␛]0;PWNED␇ erase␛[2J done" in shown and "\x1b" not in shown
