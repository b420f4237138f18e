"""One fold: a turn's events give the same conversation entries live and after /resume (the real app, the fake API)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from tests.fake_messages_api import reply, text, tool_use
from tests.scripted_model import ScriptedModel, refusal
from tests.ui_support import (send, SIZE, authored_announcements, make_app, ready, tool_source, turn_answered, turn_failed_shown,
                                   wait_until)
from tui_agent.ui.screens.approval import ApprovalScreen
from tui_agent.ui.transcript import TRUNCATION_MARK
from tui_agent.ui.turn import PROMPT_BACK
from tui_agent.ui.widgets.messages import Entry


def fields(entries: list[Entry]) -> list[dict[str, Any]]:
    """Every field of every entry but `started` (when its widget was made)."""
    return [{key: value for key, value in dataclasses.asdict(entry).items() if key != "started"} for entry in entries]


async def live_turns(repo: Path, scripted: ScriptedModel) -> tuple[list[Entry], str, tuple[int, int, float]]:
    """Two turns: text, a truncated read, create_tool, a denied write, a cut-off reply; then a prompt with an attached
    file and a failed request."""
    source = tool_source("double")
    scripted.enqueue(
        reply(text("Let me look."), tool_use("read_file", {"path": "big.txt"})),
        reply(text("Now a tool."), tool_use("create_tool", {"name": "double", "source": source})),
        reply(tool_use("write_file", {"path": "docs/other.md", "content": "nope\n"})),
        reply(text("Cut off"), stop_reason="max_tokens"),
        refusal(),
    )
    (repo / "notes.md").write_text("one\ntwo\n")
    (repo / "big.txt").write_text("".join(f"line {n} " + "x" * 60 + "\n" for n in range(1500)))
    app = make_app(repo, client=scripted)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, app, "look at big.txt and make a tool")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), timeout=60, message="the approval modal")
        await pilot.press("n")
        await wait_until(pilot, lambda: turn_answered(app, "Cut off"), timeout=60, message="the first turn")
        await send(pilot, app, "and now? see @notes.md")
        await wait_until(pilot, lambda: turn_failed_shown(app), timeout=60, message="the failed turn")
        await wait_until(pilot, lambda: any(e.text == PROMPT_BACK for e in app.conversation.entries), message="the prompt back")
        await wait_until(pilot, lambda: any(m.startswith("tool double created · ") for m in authored_announcements(app)),
                         message="the authored tool")
        await pilot.pause(0.3)
        shown = app.conversation.entries  # a truncated result, a denied call and a notice, as the events made them
        assert any(e.kind == "tool" and e.tool == "read_file" and (e.result or "").endswith(TRUNCATION_MARK) for e in shown)
        assert any(e.kind == "notice" and e.text.startswith("write_file: ") and e.level == "warning" for e in shown)
        assert any(e.kind == "notice" and "cut off at the output limit" in e.text for e in shown)
        header = (app.usage.tokens_in, app.usage.tokens_out, round(app.usage.cost_usd, 9))
        return list(app.conversation.entries), app.runtime.core.session.id, header


async def test_a_turn_folds_into_the_same_entries_live_and_after_resume(repo: Path, scripted: ScriptedModel) -> None:
    live, session_id, live_header = await live_turns(repo, scripted)
    app = make_app(repo, client=scripted)  # a new app, then /resume: the session as the file has it
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, app, f"/resume {session_id}")
        await wait_until(pilot, lambda: any(e.text == f"Resumed session {session_id}." for e in app.conversation.entries),
                         message="the resumed session")
        resumed = list(app.conversation.entries)
        resumed_header = (app.usage.tokens_in, app.usage.tokens_out, round(app.usage.cost_usd, 9))

    first_prompt = next(index for index, entry in enumerate(live) if entry.kind == "user")
    live = live[first_prompt:]  # before it: the app's own start-up notices, if any
    back = [index for index, entry in enumerate(live) if entry.text == PROMPT_BACK]
    assert back == [len(live) - 1] and live[-2].text.startswith("turn failed (")  # the app's word, after the failure
    assert resumed[-1].text == f"Resumed session {session_id}."
    assert fields(live[:-1]) == fields(resumed[:-1])
    assert resumed_header == live_header

    # what the old replay lost or worded differently
    kinds = [(entry.kind, entry.tool) for entry in resumed[:-1]]
    assert kinds == [("user", ""), ("assistant", ""), ("tool", "read_file"), ("assistant", ""), ("tool", "create_tool"),
                     ("tool", "write_file"), ("notice", ""), ("assistant", ""), ("notice", ""), ("user", ""), ("notice", ""),
                     ("notice", "")]
    read, create = resumed[2], resumed[4]
    assert read.result is not None and read.result.endswith(TRUNCATION_MARK)
    assert create.authored and create.source == tool_source("double")
    assert resumed[6].text.startswith("write_file: ") and resumed[6].level == "warning"
    assert "cut off at the output limit" in resumed[8].text
    assert (resumed[9].text, resumed[10].text) == ("and now? see @notes.md", "Attached: notes.md")
    assert resumed[11].text.startswith("turn failed (") and resumed[11].level == "error"


async def test_resume_shows_what_decodes_and_says_what_did_not(repo: Path) -> None:
    """A session file agent code tampered with: the good events are shown, the bad records named, nothing raises."""
    import json

    lines = [
        {"type": "session", "id": "tampered", "model": "m"},
        {"type": "event", "event": "TurnStarted", "data": {"prompt": "hi", "session_id": "tampered"}},
        {"type": "event", "event": "ToolCallStarted", "data": {"call_id": "c1", "name": "grep", "arguments": "not a dict"}},
        {"type": "event", "event": "Explode", "data": {}},
        {"type": "event", "event": "TextDelta", "data": {"text": "Hello."}},
    ]
    sessions = repo / ".agent" / "sessions"
    sessions.mkdir(parents=True, exist_ok=True)
    (sessions / "tampered.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines) + "{half a line")
    app = make_app(repo, resume="tampered")
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await wait_until(pilot, lambda: any(e.text == "Resumed session tampered." for e in app.conversation.entries), message="the session")
        shown = [(e.kind, e.text) for e in app.conversation.entries]
    assert shown[:2] == [("user", "hi"), ("assistant", "Hello.")]
    assert shown[2] == ("notice", "2 event record(s) in tampered.jsonl could not be read and are not shown "
                                  "(first: record 3: ToolCallStarted.arguments: Input should be an object).")


async def test_a_cancelled_turn_folds_the_same_live_and_after_resume(repo: Path, scripted: ScriptedModel) -> None:
    """Esc while a call runs: the finished call keeps its result and the stopped one says so, live and read back alike."""
    scripted.enqueue(reply(tool_use("read_file", {"path": "README.md"}), tool_use("run_shell", {"command": "sleep 30"})))
    app = make_app(repo, client=scripted)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, app, "read, then wait")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), timeout=60, message="the approval modal")
        await pilot.press("y")
        await wait_until(pilot, lambda: any(e.tool == "read_file" and e.result for e in app.conversation.entries),
                         timeout=30, message="the finished read")
        await pilot.pause(0.5)
        await pilot.press("escape")
        await wait_until(pilot, lambda: not app.turns.running, timeout=20, message="the cancel")
        live, session_id = list(app.conversation.entries), app.runtime.core.session.id
    app = make_app(repo, client=scripted)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, app, f"/resume {session_id}")
        await wait_until(pilot, lambda: any(e.text == f"Resumed session {session_id}." for e in app.conversation.entries),
                         message="the resumed session")
        resumed = list(app.conversation.entries)[:-1]
    live = live[next(index for index, entry in enumerate(live) if entry.kind == "user"):]
    stopped = next(entry for entry in live if entry.tool == "run_shell")
    assert stopped.cancelled and stopped.is_error and stopped.duration_ms is not None and stopped.duration_ms > 0
    read = next(entry for entry in resumed if entry.tool == "read_file")
    assert read.result and "demo project" in read.result and not read.cancelled
    assert live[-1].text == "Turn cancelled." and resumed[-1].text == "Turn cancelled."
    without_duration = [{**item, "duration_ms": None if item["cancelled"] else item["duration_ms"]} for item in fields(live)]
    assert without_duration == fields(resumed)  # only the live view knows how long the stopped call ran
