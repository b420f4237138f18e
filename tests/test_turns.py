"""Typed turns: the conversation's operations, the request builder, sessions (older files too) and thinking recovery,
through real session files and the real SDK against the strict fake API (which verifies thinking signatures)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from pathlib import Path
from typing import Any

from tests.agent_helpers import agent_runtime, of_type, run_turn
from tests.fake_api.thinking_rules import sign
from tests.fake_messages_api import FakeMessagesAPI, reply, text, thinking, tool_use
from tui_agent.core.agent.conversation import CANCELLED_RESULT, RESULTS_CLOSED, Conversation
from tui_agent.core.agent.request import PromptParts, RequestSettings, build_request
from tui_agent.core.agent.session_turns import load_turns
from tui_agent.core.agent.sessions import INTERRUPTED_RESULT, SessionLog
from tui_agent.core.agent.thinking import THINKING_DROPPED, ThinkingConfig
from tui_agent.core.agent.turns import AssistantTurn, ToolResults, UserTurn
from tui_agent.core.events import Notice, TurnFailed, TurnFinished
from tui_agent.core.project import Project

ADAPTIVE_MODEL = "claude-opus-4-6"


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def call(call_id: str, name: str = "read_file") -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": {"path": "README.md"}}


def test_a_prompt_is_written_once_answered_and_rollback_is_recorded(repo: Path) -> None:
    log = SessionLog.create(Project.at(repo), model="m")
    conversation = Conversation([], log, None)
    prompt = conversation.begin_prompt("first")
    conversation.add_note("the catalog changed", with_suggestion=False)  # waits with the prompt
    assert not log.path.exists()
    assert conversation.take_back_prompt() and conversation.turns == [] and not log.path.exists()
    prompt = conversation.begin_prompt("second")
    conversation.log_prompt()
    reply_turn = conversation.append(AssistantTurn(({"type": "text", "text": "answer"},)))
    later = conversation.add_note("the user undid your changes")
    conversation.append(AssistantTurn(({"type": "text", "text": "noted"},)))
    assert [type(turn) for turn in conversation.rollback_to(later)] == [UserTurn, AssistantTurn]
    assert conversation.turns == [prompt, reply_turn]
    kinds = [(r["type"], r.get("turn"), r.get("drop")) for r in records(log.path)]
    assert kinds == [("session", None, None), ("message", "prompt", None), ("message", "assistant", None),
                     ("message", "note", None), ("message", "assistant", None), ("rollback", None, 2)]
    loaded = load_turns(log.path)  # the file says what was taken back
    assert [(type(turn), turn.blocks) for turn in loaded] == [(UserTurn, prompt.blocks), (AssistantTurn, reply_turn.blocks)]
    assert conversation.drop_last_turn() is reply_turn and load_turns(log.path)[-1].blocks == prompt.blocks


def test_cancel_answers_every_call_of_the_last_reply_and_keeps_finished_results(repo: Path) -> None:
    log = SessionLog.create(Project.at(repo), model="m")
    conversation = Conversation([], log, None)
    conversation.begin_prompt("read two files")
    conversation.log_prompt()
    conversation.append(AssistantTurn((call("t1"), call("t2"))))
    finished = [{"type": "tool_result", "tool_use_id": "t1", "content": "hello"}]
    conversation.cancel("", finished)
    results = conversation.turns[-1]
    assert isinstance(results, ToolResults) and results.answered == {"t1", "t2"}
    assert [block["content"] for block in results.blocks] == ["hello", CANCELLED_RESULT]
    conversation.begin_prompt("go on")  # joins the results in one user message, results first
    assert [m["role"] for m in conversation.messages] == ["user", "assistant", "user"]
    assert [b["type"] for b in conversation.messages[-1]["content"]] == ["tool_result", "tool_result", "text"]
    assert records(log.path)[-1]["type"] == "cancelled"


def test_the_request_builder_puts_thinking_first_and_marks_the_cache(repo: Path) -> None:
    think = {"type": "thinking", "thinking": "hm", "signature": sign("hm")}
    turns = [UserTurn(({"type": "text", "text": "hi"},)),
             AssistantTurn(({"type": "text", "text": "part one"},)),
             AssistantTurn((think, {"type": "text", "text": "part two"})),  # two replies in a row (an older file)
             UserTurn(({"type": "text", "text": "next"},))]
    parts = PromptParts([{"type": "text", "text": "system"}], [])
    request = build_request(turns, parts, RequestSettings(ADAPTIVE_MODEL, ThinkingConfig()))
    messages = request.kwargs["messages"]
    assert [b["type"] for b in messages[1]["content"]] == ["thinking", "text", "text"] and messages[1]["content"][0] == think
    assert messages[-1]["content"][-1]["cache_control"] == {"type": "ephemeral"} and request.end == (2, 0)
    assert request.kwargs["thinking"] == ThinkingConfig() and request.kwargs["system"] == parts.system
    local = build_request(turns, parts, RequestSettings("qwen2.5-coder:7b", ThinkingConfig(), request.end))
    assert all(b["type"] != "thinking" for m in local.kwargs["messages"] for b in m["content"])
    assert "cache_control" in local.kwargs["messages"][2]["content"][0]  # the previous request's end is read
    assert turns[2].blocks[0] is think and "cache_control" not in think  # the turns are not changed


async def test_a_session_in_the_older_format_loads_and_resumes(repo: Path) -> None:
    """Records without `turn` (written before typed turns): string content, a note merged into a results message,
    a call the session never answered (its ToolCallFinished result is used), signed thinking kept verbatim."""
    think = {"type": "thinking", "thinking": "look first", "signature": sign("look first")}
    old = [
        {"type": "session", "id": "20250101-000000-abcdef", "model": ADAPTIVE_MODEL, "started": 0, "project": str(repo)},
        {"type": "message", "message": {"role": "user", "content": "what is in README.md?"}},
        {"type": "message", "message": {"role": "assistant", "content": [think, call("t1")]}},
        {"type": "message", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "hello"}, {"type": "text", "text": "[catalog update] x"}]}},
        {"type": "message", "message": {"role": "assistant", "content": [{"type": "text", "text": "It says hello."}]}},
        {"type": "message", "message": {"role": "user", "content": [{"type": "text", "text": "and again"}]}},
        {"type": "message", "message": {"role": "assistant", "content": [call("t2"), call("t3")]}},
        {"type": "event", "event": "ToolCallFinished", "data": {"call_id": "t2", "name": "read_file", "result": "hello",
                                                                "is_error": False, "duration_ms": 1.0}},
        {"type": "cancelled", "time": 0},
    ]
    sessions = repo / ".agent" / "sessions"
    sessions.mkdir(parents=True, exist_ok=True)
    (sessions / "20250101-000000-abcdef.jsonl").write_text("".join(json.dumps(r) + "\n" for r in old))
    turns = load_turns(sessions / "20250101-000000-abcdef.jsonl")
    assert [type(turn).__name__ for turn in turns] == ["UserTurn", "AssistantTurn", "ToolResults", "AssistantTurn",
                                                        "UserTurn", "AssistantTurn", "ToolResults"]
    assert turns[1].blocks[0] == think
    assert [b["content"] for b in turns[-1].blocks] == ["hello", INTERRUPTED_RESULT]
    with FakeMessagesAPI() as api:
        api.enqueue(reply(text("resumed fine")))
        async with agent_runtime(repo, api, model=ADAPTIVE_MODEL, resume="20250101-000000-abcdef") as runtime:
            events = await run_turn(runtime, "what now?")
    assert of_type(events, TurnFinished)[-1].text == "resumed fine"
    sent = api.requests[0].body["messages"]
    assert sent[1]["content"][0] == think  # verbatim, signature included (the strict fake verified it)
    assert [b["type"] for b in sent[-1]["content"]] == ["tool_result", "tool_result", "text"]


def foreign_signature(thinking_text: str) -> str:
    """A signature made with another secret: what a session signed for another API key or deployment carries."""
    return base64.b64encode(hmac.new(b"another key", b"thinking:" + thinking_text.encode(), hashlib.sha256).digest()).decode()


def sign_for_another_key(path: Path) -> None:
    lines = records(path)
    for record in lines:
        for block in record.get("message", {}).get("content", []) if record.get("type") == "message" else []:
            if block.get("type") == "thinking":
                block["signature"] = foreign_signature(block["thinking"])
    path.write_text("".join(json.dumps(record) + "\n" for record in lines))


async def test_a_resumed_session_whose_signatures_are_refused_leaves_earlier_thinking_out_once(repo: Path) -> None:
    with FakeMessagesAPI() as api:
        api.enqueue(reply(thinking("plan the read"), tool_use("read_file", {"path": "README.md"})),
                    reply(thinking("done reading"), text("It greets you.")))
        async with agent_runtime(repo, api, model=ADAPTIVE_MODEL) as runtime:
            await run_turn(runtime, "what does the README say?")
        [path] = (repo / ".agent" / "sessions").glob("*.jsonl")
        sign_for_another_key(path)  # the same session, as if signed for another key
        api.enqueue(reply(thinking("new thought"), tool_use("list_files", {"pattern": "*.md"})),
                    reply(thinking("listed"), text("Two files.")))
        async with agent_runtime(repo, api, model=ADAPTIVE_MODEL, continue_latest=True) as runtime:
            events = await run_turn(runtime, "list the markdown files")
        refused = api.take_violations()
        api.enqueue(reply(text("Still here.")))
        async with agent_runtime(repo, api, model=ADAPTIVE_MODEL, continue_latest=True) as runtime:
            again = await run_turn(runtime, "anything else?")  # the session file says the old thinking is left out
    assert len(refused) == 1 and "Invalid `signature` in `thinking` block" in refused[0]
    assert [e.message for e in of_type(events, Notice) if e.message == THINKING_DROPPED] == [THINKING_DROPPED]
    assert not of_type(events, TurnFailed) and of_type(events, TurnFinished)[-1].text == "Two files."
    retried = api.requests[3].body["messages"]  # requests: 2 first session, the refused one, its retry, the continuation
    assert all(b["type"] != "thinking" for m in retried for b in m["content"])
    continued = api.requests[4].body["messages"]  # the turn in flight keeps its own (valid) thinking, first
    assert continued[-2]["content"][0] == {"type": "thinking", "thinking": "new thought", "signature": sign("new thought")}
    assert sum(b["type"] == "thinking" for m in continued for b in m["content"]) == 1
    assert not api.take_violations() and not [e for e in of_type(again, Notice) if e.message == THINKING_DROPPED]
    kept = [b for m in api.requests[5].body["messages"] for b in m["content"] if b["type"] == "thinking"]
    assert [b["thinking"] for b in kept] == ["new thought", "listed"]  # this key's own thinking still goes back


async def test_a_turn_stopped_after_its_results_is_closed_when_its_refused_thinking_is_left_out(repo: Path) -> None:
    """The prompt after a turn stopped at max_turns joins that turn's results: the API would read it as continuing the
    turn and require its thinking, so once that thinking is left out an assistant line closes the turn first."""
    (repo / ".agent").mkdir(exist_ok=True)
    (repo / ".agent" / "config.toml").write_text("[agent]\nmax_turns = 1\n")
    with FakeMessagesAPI() as api:
        api.enqueue(reply(thinking("read it"), tool_use("read_file", {"path": "README.md"})))
        async with agent_runtime(repo, api, model=ADAPTIVE_MODEL) as runtime:
            stopped = await run_turn(runtime, "read the README")
        assert of_type(stopped, TurnFailed)[-1].kind == "max_turns"
        [path] = (repo / ".agent" / "sessions").glob("*.jsonl")
        sign_for_another_key(path)
        api.enqueue(reply(text("Continued.")), reply(text("And again.")))
        async with agent_runtime(repo, api, model=ADAPTIVE_MODEL, continue_latest=True) as runtime:
            events = await run_turn(runtime, "continue")
        async with agent_runtime(repo, api, model=ADAPTIVE_MODEL, continue_latest=True) as runtime:
            again = await run_turn(runtime, "once more")
        refused = api.take_violations()
    assert len(refused) == 1 and "Invalid `signature`" in refused[0]
    assert of_type(events, TurnFinished)[-1].text == "Continued." and of_type(again, TurnFinished)[-1].text == "And again."
    retried = api.requests[2].body["messages"]
    assert [m["role"] for m in retried] == ["user", "assistant", "user", "assistant", "user"]
    assert retried[3]["content"] == [{"type": "text", "text": RESULTS_CLOSED}]
    assert [b["type"] for b in retried[2]["content"]] == ["tool_result"] and retried[4]["content"][0]["text"] == "continue"
    assert api.requests[3].body["messages"][:5] == [{**m, "content": [{k: v for k, v in b.items() if k != "cache_control"}
                                                                      for b in m["content"]]} for m in retried]


def test_leaving_thinking_out_spares_the_turn_a_tool_result_continues(repo: Path) -> None:
    earlier = AssistantTurn(({"type": "thinking", "thinking": "a", "signature": "s"}, {"type": "text", "text": "hi"}))
    in_flight = AssistantTurn(({"type": "redacted_thinking", "data": "d"}, call("t9")))
    conversation = Conversation([UserTurn(({"type": "text", "text": "go"},)), earlier, UserTurn(({"type": "text", "text": "more"},)),
                                 in_flight, ToolResults(({"type": "tool_result", "tool_use_id": "t9", "content": "ok"},))],
                                SessionLog.create(Project.at(repo), model="m"), None)
    assert conversation.in_flight() is in_flight and conversation.drop_earlier_thinking() == 1
    assert conversation.turns[1].blocks == ({"type": "text", "text": "hi"},) and conversation.turns[3] is in_flight
    assert conversation.drop_earlier_thinking() == 0  # nothing more it may leave out: the error stands


def test_hostile_session_records_load_as_a_sendable_conversation(repo: Path) -> None:
    """Session files are hostile input: odd records are left out or typed by what they hold, never a traceback."""
    path = repo / ".agent" / "sessions" / "odd.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    odd = [
        {"type": "message", "turn": "assistant", "message": {"role": "user", "content": "typed by its role, not its claim"}},
        {"type": "message", "message": {"role": "system", "content": "no such role"}},
        {"type": "message", "message": "not a message"},
        {"type": "message", "turn": "prompt", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "nobody", "content": "answers no call"}, 7, {"no": "type"}]}},
        {"type": "rollback", "drop": True},
        {"type": "rollback", "drop": -3},
        {"type": "message", "message": {"role": "assistant", "content": {"not": "a list"}}},
        {"type": "message", "message": {"role": "assistant", "content": [call("t1")]}},
    ]
    path.write_text("".join(json.dumps(record) + "\n" for record in odd))
    turns = load_turns(path)
    assert [type(turn).__name__ for turn in turns] == ["UserTurn", "AssistantTurn", "AssistantTurn", "ToolResults"]
    assert turns[-1].blocks[0]["content"] == INTERRUPTED_RESULT
    request = build_request(turns, PromptParts([], []), RequestSettings(ADAPTIVE_MODEL, ThinkingConfig()))
    assert [m["role"] for m in request.kwargs["messages"]] == ["user", "assistant", "user"]
