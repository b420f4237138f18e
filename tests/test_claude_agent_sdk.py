"""The official Claude Agent SDK for Python, with tuiagent as its CLI: a drop-in for Claude Code's headless protocol.

The SDK starts `tuiagent --output-format stream-json --verbose --input-format stream-json ...`, sends `initialize`
and the prompt as control protocol and user messages on stdin, answers `can_use_tool` requests, and parses every
line into its typed messages (a missing required field is a MessageParseError)."""

from __future__ import annotations

import asyncio
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import pytest

claude_agent_sdk = pytest.importorskip("claude_agent_sdk")
from claude_agent_sdk import (  # noqa: E402
    AssistantMessage, ClaudeAgentOptions, ClaudeSDKClient, PermissionResultAllow, PermissionResultDeny, ResultError, ResultMessage,
    SystemMessage, ToolUseBlock, UserMessage, query,
)

from tests.fake_messages_api import FakeMessagesAPI, reply, text, tool_use  # noqa: E402

CLI = shutil.which("tuiagent") or str(Path(sys.executable).with_name("tuiagent"))


async def one(prompt: str) -> Any:
    yield {"type": "user", "message": {"role": "user", "content": prompt}, "parent_tool_use_id": None, "session_id": ""}


async def run(prompt: str, options: ClaudeAgentOptions) -> list[Any]:
    return [message async for message in query(prompt=one(prompt), options=options)]


def options(repo: Path, **extra: Any) -> ClaudeAgentOptions:
    return ClaudeAgentOptions(cli_path=CLI, cwd=str(repo), **extra)


@pytest.mark.filterwarnings("ignore::UserWarning")  # the SDK notes that Read, allowed outright, is not asked about
async def test_a_query_runs_to_completion_with_tools_permissions_and_a_resumed_session(
        repo: Path, api: FakeMessagesAPI) -> None:
    asked: list[tuple[str, dict[str, Any]]] = []

    async def can_use_tool(name: str, tool_input: dict[str, Any], context: Any) -> Any:
        asked.append((name, tool_input))
        return PermissionResultAllow()

    api.enqueue(reply(text("Reading, then writing."), tool_use("read_file", {"path": "README.md"}),
                      tool_use("run_shell", {"command": "echo hi > made.txt"})),
                reply(text("Made it.")))
    first = await run("make a file", options(
        repo, system_prompt="You answer in five words.", allowed_tools=["Read"], max_turns=4,
        permission_mode="default", can_use_tool=can_use_tool))

    init, *middle, result = first
    assert isinstance(init, SystemMessage) and init.subtype == "init"
    assert init.data["permissionMode"] == "default" and "run_shell" in init.data["tools"]
    assert init.data["claude_code_version"] and init.data["apiKeySource"] == "ANTHROPIC_API_KEY"
    assert isinstance(result, ResultMessage) and result.subtype == "success" and not result.is_error
    assert result.result == "Made it." and result.num_turns == 2 and result.stop_reason == "end_turn"
    assert result.duration_api_ms >= 0 and result.model_usage and result.uuid
    assistants = [m for m in middle if isinstance(m, AssistantMessage)]
    assert [type(b).__name__ for b in assistants[0].content] == ["TextBlock", "ToolUseBlock", "ToolUseBlock"]
    assert assistants[0].message_id and assistants[0].stop_reason == "tool_use" and assistants[0].session_id
    assert any(isinstance(m, UserMessage) for m in middle)
    # Read was pre-approved (and needs no approval anyway); the shell command went to can_use_tool as Bash
    assert asked == [("Bash", {"command": "echo hi > made.txt"})]
    assert (repo / "made.txt").read_text().strip() == "hi"
    system = api.requests[0].body["system"]
    assert "You answer in five words." in system[0]["text"] and "You are tuiagent" not in system[0]["text"]

    api.enqueue(reply(text("I remember.")))  # the session resumed: the model sees the first conversation
    again = await run("what did you do?", options(repo, resume=result.session_id))
    assert isinstance(again[-1], ResultMessage) and again[-1].result == "I remember."
    assert again[-1].session_id == result.session_id
    sent = api.requests[-1].messages
    assert sent[0]["content"][0]["text"] == "make a file" and len(sent) == 5


async def test_a_denied_call_is_not_run_and_is_reported(repo: Path, api: FakeMessagesAPI) -> None:
    async def deny(name: str, tool_input: dict[str, Any], context: Any) -> Any:
        return PermissionResultDeny(message="not today")

    api.enqueue(reply(tool_use("run_shell", {"command": "echo no > denied.txt"})), reply(text("Fine, I did not.")))
    messages = await run("try", options(repo, can_use_tool=deny))
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.subtype == "success"
    assert not (repo / "denied.txt").exists()
    assert result.permission_denials and result.permission_denials[0]["tool_name"] == "run_shell"


async def test_allowed_and_disallowed_tools_and_modes_use_claude_codes_names(repo: Path, api: FakeMessagesAPI) -> None:
    api.enqueue(reply(tool_use("run_shell", {"command": "touch allowed.txt"})), reply(text("done")))
    messages = await run("go", options(repo, allowed_tools=["Bash(touch allowed.txt:*)"], disallowed_tools=["Write", "WebFetch"],
                                       system_prompt={"type": "preset", "preset": "claude_code", "append": "Be kind."},
                                       permission_mode="acceptEdits", max_turns=3))
    init, result = messages[0], messages[-1]
    assert init.data["permissionMode"] == "acceptEdits" and "write_file" not in init.data["tools"]
    assert isinstance(result, ResultMessage) and result.subtype == "success"
    assert (repo / "allowed.txt").exists()  # approved by the translated rule, nobody asked (no prefix rule covers `>`)
    assert "write_file" not in [tool["name"] for tool in api.requests[0].body["tools"]]
    system = api.requests[0].body["system"][0]["text"]
    assert system.startswith("You are tuiagent") and system.rstrip().endswith("Be kind.")


async def test_max_turns_and_plan_mode(repo: Path, api: FakeMessagesAPI) -> None:
    api.enqueue(reply(tool_use("write_file", {"path": "x.txt", "content": "x"})),
                reply(tool_use("list_files", {"pattern": "*"})))
    messages: list[Any] = []
    with pytest.raises(ResultError):  # as from Claude Code: the error result, then a non-zero exit
        async for message in query(prompt=one("loop"), options=options(repo, permission_mode="plan", max_turns=2)):
            messages.append(message)
    result = messages[-1]
    assert messages[0].data["permissionMode"] == "plan"
    assert isinstance(result, ResultMessage) and result.subtype == "error_max_turns" and result.is_error
    assert not (repo / "x.txt").exists()


async def test_interrupt_ends_the_turn_and_the_client_goes_on(repo: Path, api: FakeMessagesAPI) -> None:
    api.enqueue(reply(tool_use("run_shell", {"command": "sleep 60"})), reply(text("after the interrupt")))
    async with ClaudeSDKClient(options(repo, permission_mode="bypassPermissions")) as client:
        await client.query("sleep")
        started = None
        async for message in client.receive_messages():
            if isinstance(message, AssistantMessage) and any(isinstance(b, ToolUseBlock) for b in message.content):
                await asyncio.sleep(1.0)
                started = time.monotonic()
                await client.interrupt()
            if isinstance(message, ResultMessage):
                result = message
                break
        assert started is not None and time.monotonic() - started < 10
        assert result.is_error and result.subtype == "error_during_execution" and result.terminal_reason == "aborted_streaming"
        await client.query("and now?")
        async for message in client.receive_response():
            last = message
        assert isinstance(last, ResultMessage) and last.result == "after the interrupt" and not last.is_error


async def test_a_run_that_cannot_start_ends_in_an_error_result(repo: Path, api: FakeMessagesAPI) -> None:
    messages: list[Any] = []
    with pytest.raises(ResultError, match="no-such-session"):
        async for message in query(prompt=one("hi"), options=options(repo, resume="no-such-session")):
            messages.append(message)
    assert isinstance(messages[-1], ResultMessage) and messages[-1].is_error
