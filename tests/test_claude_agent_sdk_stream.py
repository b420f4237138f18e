"""The official Claude Agent SDK against tuiagent (as its CLI) and tests/fake_api: the API's own message ids and usage
in the assistant and result lines, every usage field Claude Code's types require, partial messages, can_use_tool's
updated input, and the SDK's hooks (PreToolUse, PostToolUse, UserPromptSubmit, Stop)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("claude_agent_sdk")
from anthropic.types.beta import BetaMessage  # noqa: E402
from claude_agent_sdk import (  # noqa: E402
    AssistantMessage, HookMatcher, PermissionResultAllow, ResultError, ResultMessage, StreamEvent, query,
)

from tests.fake_messages_api import FakeMessagesAPI, reply, text, tool_use  # noqa: E402
from tests.test_claude_agent_sdk import CLI, one, options, run  # noqa: E402

FAKE_API_ID = re.compile(r"msg_\d{6}$")  # tests/fake_api's ids; tuiagent's own would be msg_ + 24 hex digits
REQUIRED_USAGE = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens",
                  "cache_creation", "server_tool_use", "service_tier", "inference_geo", "iterations", "speed")
"""The keys of Claude Code's NonNullableUsage (its empty usage object has exactly these, fallback_credit aside)."""


async def test_assistant_lines_carry_the_apis_message_and_the_result_every_required_usage_field(
        repo: Path, api: FakeMessagesAPI) -> None:
    api.enqueue(reply(tool_use("list_files", {"pattern": "*"}), usage={"service_tier": "priority"}),  # type: ignore[dict-item]
                reply(text("Listed."), usage={"cache_creation_input_tokens": 7}))
    messages = await run("list", options(repo))
    assistants = [m for m in messages if isinstance(m, AssistantMessage)]
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.subtype == "success"

    ids = [m.message_id for m in assistants]
    assert len(ids) == 2 and len(set(ids)) == 2 and all(FAKE_API_ID.match(str(i)) for i in ids)
    assert [m.stop_reason for m in assistants] == ["tool_use", "end_turn"]
    first, second = (m.usage or {} for m in assistants)
    assert first["service_tier"] == "priority"  # the API's own value, passed on
    assert second["service_tier"] == "standard"  # not reported: Claude Code's default
    assert second["cache_creation"] == {"ephemeral_5m_input_tokens": 7, "ephemeral_1h_input_tokens": 0}
    for usage in (first, second, result.usage or {}):
        missing = [key for key in REQUIRED_USAGE if usage.get(key) is None]
        assert not missing, missing
    assert result.usage and result.usage["service_tier"] == "priority"  # the newest reported, as Claude Code keeps it
    assert result.usage["cache_creation"]["ephemeral_5m_input_tokens"] == result.usage["cache_creation_input_tokens"]
    assert result.usage["speed"] == "standard" and result.usage["iterations"] == [] and result.usage["inference_geo"] == ""
    assert result.usage["server_tool_use"] == {"web_search_requests": 0, "web_fetch_requests": 0}


def test_assistant_message_is_a_valid_api_message(repo: Path, api: FakeMessagesAPI) -> None:
    """The `message` of an assistant line parses as the API's own BetaMessage (the SDK keeps only parts of it, so
    the line is read from the CLI's stdout)."""
    api.enqueue(reply(text("Hello.")))
    done = subprocess.run([CLI, "-p", "hi", "--output-format", "stream-json", "--verbose"], cwd=repo,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    line = next(line for line in lines if line["type"] == "assistant")
    message = BetaMessage.model_validate(line["message"])
    assert FAKE_API_ID.match(message.id) and message.model == api.requests[0].body["model"]
    assert message.usage.service_tier == "standard" and message.usage.cache_creation is not None


async def test_partial_messages_reach_the_sdk_as_stream_events(repo: Path, api: FakeMessagesAPI) -> None:
    api.enqueue(reply(text("Hello there."), tool_use("list_files", {"pattern": "*"})), reply(text("Done.")))
    messages = await run("hi", options(repo, include_partial_messages=True))
    events = [m for m in messages if isinstance(m, StreamEvent)]
    kinds = [e.event["type"] for e in events]
    assert kinds.count("message_start") == 2 and kinds.count("message_stop") == 2
    assert "content_block_delta" in kinds and all(e.uuid and e.session_id and e.parent_tool_use_id is None for e in events)
    deltas = [e.event["delta"] for e in events if e.event["type"] == "content_block_delta"]
    assert "".join(d.get("text", "") for d in deltas if d["type"] == "text_delta") == "Hello there.Done."
    assert any(d["type"] == "input_json_delta" for d in deltas)
    starts = [e.event["message"]["id"] for e in events if e.event["type"] == "message_start"]
    assistants = [m for m in messages if isinstance(m, AssistantMessage)]
    assert [m.message_id for m in assistants] == starts
    # each request's events come before its assistant message
    order = [("start", m.event["message"]["id"]) if isinstance(m, StreamEvent) and m.event["type"] == "message_start"
             else ("assistant", m.message_id) for m in messages
             if isinstance(m, AssistantMessage) or (isinstance(m, StreamEvent) and m.event["type"] == "message_start")]
    assert order == [("start", starts[0]), ("assistant", starts[0]), ("start", starts[1]), ("assistant", starts[1])]


async def test_without_the_flag_no_stream_events(repo: Path, api: FakeMessagesAPI) -> None:
    api.enqueue(reply(text("Hi.")))
    messages = await run("hi", options(repo))
    assert not any(isinstance(m, StreamEvent) for m in messages)
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "Hi."


async def test_an_allow_with_updated_input_runs_the_updated_input(repo: Path, api: FakeMessagesAPI) -> None:
    asked: list[dict[str, Any]] = []

    async def rewrite(name: str, tool_input: dict[str, Any], context: Any) -> Any:
        asked.append(tool_input)
        return PermissionResultAllow(updated_input={"command": "echo safer > changed.txt"})

    api.enqueue(reply(tool_use("run_shell", {"command": "echo hi > original.txt"})), reply(text("Done.")))
    messages = await run("go", options(repo, can_use_tool=rewrite))
    assert isinstance(messages[-1], ResultMessage) and messages[-1].subtype == "success"
    assert asked == [{"command": "echo hi > original.txt"}]  # asked once; the restart is not asked about again
    assert not (repo / "original.txt").exists() and (repo / "changed.txt").read_text().strip() == "safer"
    result = api.requests[1].messages[-1]["content"][0]
    assert result["type"] == "tool_result" and not result.get("is_error")


async def test_an_updated_input_is_checked_like_the_models(repo: Path, api: FakeMessagesAPI) -> None:
    async def break_it(name: str, tool_input: dict[str, Any], context: Any) -> Any:
        return PermissionResultAllow(updated_input={"command": 5})

    api.enqueue(reply(tool_use("run_shell", {"command": "echo hi > original.txt"})), reply(text("Understood.")))
    messages = await run("go", options(repo, can_use_tool=break_it))
    assert isinstance(messages[-1], ResultMessage) and messages[-1].subtype == "success"
    assert not (repo / "original.txt").exists()
    result = api.requests[1].messages[-1]["content"][0]
    assert result["is_error"] and "`command`" in json.dumps(result["content"]) and "Traceback" not in json.dumps(result)


async def test_pre_tool_use_hooks_deny_or_allow_with_a_new_input(repo: Path, api: FakeMessagesAPI) -> None:
    seen: list[dict[str, Any]] = []

    async def guard(hook_input: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        seen.append(hook_input)
        command = hook_input["tool_input"]["command"]
        if "rm " in command:
            return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                           "permissionDecisionReason": "no deleting"}}
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow",
                                       "updatedInput": {"command": command.replace("first", "second")}}}

    (repo / "keep.txt").write_text("keep\n")
    api.enqueue(reply(tool_use("run_shell", {"command": "rm keep.txt"}), tool_use("run_shell", {"command": "echo first > out.txt"}),
                      tool_use("list_files", {"pattern": "*"})),
                reply(text("Done.")))
    messages = await run("go", options(repo, hooks={"PreToolUse": [HookMatcher(matcher="Bash", hooks=[guard])]}))
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.subtype == "success"
    assert (repo / "keep.txt").exists() and (repo / "out.txt").read_text().strip() == "second"  # allowed: nobody asked
    assert [s["tool_name"] for s in seen] == ["Bash", "Bash"]  # the matcher: list_files (Glob) is not Bash
    assert seen[0]["hook_event_name"] == "PreToolUse" and seen[0]["session_id"] == result.session_id
    assert seen[0]["tool_use_id"] and seen[0]["cwd"] == str(repo)
    denied, ran, listed = api.requests[1].messages[-1]["content"]
    assert denied["is_error"] and "no deleting" in json.dumps(denied["content"])
    assert not ran.get("is_error") and not listed.get("is_error")
    assert result.permission_denials and result.permission_denials[0]["tool_name"] == "run_shell"


async def test_post_tool_use_hooks_add_to_what_the_model_gets(repo: Path, api: FakeMessagesAPI) -> None:
    responses: list[Any] = []

    async def note(hook_input: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        responses.append(hook_input["tool_response"])
        return {"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "README is important"}}

    api.enqueue(reply(tool_use("read_file", {"path": "README.md"})), reply(text("Noted.")))
    messages = await run("read", options(repo, hooks={"PostToolUse": [HookMatcher(matcher="Read", hooks=[note])]}))
    assert isinstance(messages[-1], ResultMessage) and messages[-1].subtype == "success"
    assert len(responses) == 1 and (repo / "README.md").read_text().splitlines()[0] in responses[0]
    sent = json.dumps(api.requests[1].messages[-1]["content"][0]["content"])
    assert "README is important" in sent


async def test_user_prompt_submit_hooks_add_context_or_block_the_prompt(repo: Path, api: FakeMessagesAPI) -> None:
    async def add(hook_input: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        assert hook_input["hook_event_name"] == "UserPromptSubmit" and hook_input["prompt"] == "what day is it?"
        return {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "Today is Tuesday."}}

    api.enqueue(reply(text("Tuesday.")))
    messages = await run("what day is it?", options(repo, hooks={"UserPromptSubmit": [HookMatcher(hooks=[add])]}))
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "Tuesday."
    assert api.requests[0].messages[0]["content"][0]["text"] == "what day is it?\n\nToday is Tuesday."

    async def block(hook_input: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        return {"decision": "block", "reason": "no secrets in prompts"}

    seen: list[Any] = []
    with pytest.raises(ResultError, match="no secrets in prompts"):
        async for message in query(prompt=one("my password is hunter2"),
                                   options=options(repo, hooks={"UserPromptSubmit": [HookMatcher(hooks=[block])]})):
            seen.append(message)
    assert isinstance(seen[-1], ResultMessage) and seen[-1].is_error
    assert len(api.requests) == 1  # the blocked prompt never reached the model


async def test_a_stop_hook_that_blocks_makes_the_turn_go_on(repo: Path, api: FakeMessagesAPI) -> None:
    active: list[bool] = []

    async def not_yet(hook_input: dict[str, Any], tool_use_id: str | None, context: Any) -> dict[str, Any]:
        active.append(hook_input["stop_hook_active"])
        return {} if hook_input["stop_hook_active"] else {"decision": "block", "reason": "Run the tests too."}

    api.enqueue(reply(text("Done.")), reply(text("Tests pass.")))
    messages = await run("fix it", options(repo, hooks={"Stop": [HookMatcher(hooks=[not_yet])]}))
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.subtype == "success" and result.result == "Tests pass."
    assert active == [False, True]
    assert api.requests[1].messages[-1]["content"][0]["text"] == "Run the tests too."
