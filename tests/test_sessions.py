"""Session transcripts: appended and flushed per record, truncated tails ignored, repaired for resuming."""

from __future__ import annotations

import json
from pathlib import Path

from tui_agent.core.agent.sessions import (
    INTERRUPTED_RESULT, SessionLog, latest_session_id, list_sessions, load_messages,
)
from tui_agent.core.agent.session_turns import repair_turns
from tui_agent.core.agent.turns import merged_messages, turns_of
from tui_agent.core.events import TextDelta, TurnStarted
from tui_agent.core.project import Project
from tui_agent.core.runtime_state import agent_of


def test_records_are_on_disk_as_soon_as_they_are_appended(repo: Path) -> None:
    project = Project.at(repo)
    log = SessionLog.create(project, model="m")
    assert not log.path.exists()  # nothing said yet, no file
    log.append_event(TurnStarted("hello", log.id))
    log.append_message({"role": "user", "content": [{"type": "text", "text": "hello"}]})
    lines = log.path.read_text().splitlines()  # read while the log is still open: flushed
    assert [json.loads(line)["type"] for line in lines] == ["session", "event", "message"]
    assert latest_session_id(project) == log.id
    assert list_sessions(project)[0].first_prompt == "hello"
    log.close()



def test_a_file_name_that_is_not_utf8_is_written_and_read_back(repo: Path) -> None:
    """A lone surrogate (a name's byte os.fsdecode could not decode) in a record never stops the log: kept as its JSON
    escape, valid UTF-8, read back as it was."""
    project = Project.at(repo)
    log = SessionLog.create(project, model="m")
    log.append_message({"role": "user", "content": [{"type": "text", "text": "pipe\udcff é"}]})
    log.close()
    log.path.read_bytes().decode("utf-8")
    assert load_messages(log.path)[0]["content"][0]["text"] == "pipe\udcff é"


def test_a_truncated_last_line_is_ignored_and_appends_continue(repo: Path) -> None:
    project = Project.at(repo)
    log = SessionLog.create(project, model="m")
    log.append_message({"role": "user", "content": [{"type": "text", "text": "hi"}]})
    log.append_message({"role": "assistant", "content": [{"type": "text", "text": "hello"}]})
    log.close()
    with log.path.open("a") as handle:
        handle.write('{"type": "message", "message": {"role": "user", "cont')  # a crash mid-write
    assert [m["role"] for m in load_messages(log.path)] == ["user", "assistant"]
    reopened = SessionLog.reopen(project, log.id)
    reopened.append_event(TextDelta("more"))
    reopened.close()
    assert all(json.loads(line) for line in log.path.read_text().splitlines())


def test_resuming_after_clear_starts_from_the_clear(repo: Path) -> None:
    project = Project.at(repo)
    log = SessionLog.create(project, model="m")
    log.append_message({"role": "user", "content": [{"type": "text", "text": "before"}]})
    log.append_message({"role": "assistant", "content": [{"type": "text", "text": "old answer"}]})
    log.append({"type": "clear", "time": 0})
    log.append_message({"role": "user", "content": [{"type": "text", "text": "after"}]})
    log.close()
    assert load_messages(log.path) == [{"role": "user", "content": [{"type": "text", "text": "after"}]}]
    assert "old answer" in log.path.read_text()  # the file keeps what was said


def test_repair_answers_dangling_tool_uses_and_merges_user_turns() -> None:
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "go"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "grep", "input": {}},
                                          {"type": "tool_use", "id": "t2", "name": "grep", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]},
        {"role": "user", "content": [{"type": "text", "text": "next prompt"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t3", "name": "grep", "input": {}}]},
    ]
    repaired = merged_messages(repair_turns(turns_of(messages)))
    assert [m["role"] for m in repaired] == ["user", "assistant", "user", "assistant", "user"]
    second = repaired[2]["content"]
    assert [b.get("tool_use_id") for b in second[:2]] == ["t1", "t2"] and second[1]["content"] == INTERRUPTED_RESULT
    assert second[2]["text"] == "next prompt"
    assert repaired[4]["content"][0]["tool_use_id"] == "t3"


async def test_runtime_resume_and_new_session_switch_the_conversation(repo: Path) -> None:
    from tests.agent_helpers import agent_runtime, run_turn
    from tests.fake_messages_api import FakeMessagesAPI, reply, text

    with FakeMessagesAPI() as api:
        api.enqueue(reply(text("one")), reply(text("two")), reply(text("three")))
        async with agent_runtime(repo, api) as runtime:
            await run_turn(runtime, "first")
            first_id = agent_of(runtime).session_id
            runtime.new_session()
            await run_turn(runtime, "fresh")
            runtime.resume(first_id)
            await run_turn(runtime, "back")
    assert [len(r.messages) for r in api.requests] == [1, 1, 3]
    assert api.requests[2].messages[0]["content"][0]["text"] == "first"
    assert len(list_sessions(Project.at(repo))) == 2
