"""The fold of events into conversation entries, as plain data (tui_agent/ui/transcript.py)."""

from __future__ import annotations

from tui_agent.core.events import (
    CatalogChanged,
    TextDelta,
    ToolAuthored,
    ToolCallFinished,
    ToolCallStarted,
    TurnCancelled,
    TurnFailed,
    TurnFinished,
    TurnStarted,
    Usage,
)
from tui_agent.core.agent.session_events import decode_events
from tui_agent.ui.transcript import CANCELLED_CALL, INTERRUPTED_CALL, SEGMENT_CHARS, TRUNCATION_MARK, Transcript, transcript_of
from tui_agent.ui.widgets.messages import Entry

USAGE = Usage(10, 5, 0, 0, 0.01, 0.01)


def test_text_stays_one_reply_across_usage_and_change_events_and_ends_with_the_turn() -> None:
    transcript = transcript_of([
        TurnStarted("hi", "s"), TextDelta("Hel"), USAGE, CatalogChanged(("x",)), TextDelta("lo"), TurnFinished("Hello"),
        TextDelta("next"),
    ])
    assert [(e.kind, e.text) for e in transcript.entries] == [("user", "hi"), ("assistant", "Hello"), ("assistant", "next")]


def test_a_long_reply_continues_in_a_new_entry_at_a_paragraph_break() -> None:
    first = "a" * SEGMENT_CHARS
    transcript = Transcript()
    step = transcript.apply(TextDelta(first))
    assert step.added == [transcript.entries[0]] and step.text == [(transcript.entries[0], first)]
    step = transcript.apply(TextDelta("end.\n\nmore"))
    old, new = transcript.entries
    assert (old.text, new.text, new.continued) == (first + "end.\n\n", "more", True)
    assert step.added == [new] and step.text == [(old, "end.\n\n"), (new, "more")]


def test_a_finished_call_is_marked_truncated_and_an_authored_tool_completes_its_call_in_either_order() -> None:
    transcript = transcript_of([
        ToolCallStarted("c1", "create_tool", {"name": "double", "source": "draft"}),
        ToolCallFinished("c1", "create_tool", "created", False, 5.0, truncated=True),
    ])
    step = transcript.apply(ToolAuthored("double", "tool", "final source", "abc1234", True))
    [entry] = transcript.entries
    assert step.changed == [entry] and entry.source == "final source" and entry.authored
    assert entry.result == "created" + TRUNCATION_MARK and entry.duration_ms == 5.0

    early = transcript_of([
        ToolCallStarted("c1", "create_tool", {"name": "double", "source": "draft"}),
        ToolAuthored("double", "tool", "final source", "abc1234", True),
        ToolCallFinished("c1", "create_tool", "created", False, 5.0, truncated=True),
    ])
    assert early.entries[0] == Entry("tool", call_id="c1", tool="create_tool", arguments={"name": "double", "source": "draft"},
                                     result="created" + TRUNCATION_MARK, duration_ms=5.0, authored=True, source="final source",
                                     started=early.entries[0].started)


def test_an_echoed_prompt_is_not_shown_twice_and_a_resumed_one_notes_its_attachments_as_the_app_did() -> None:
    transcript = Transcript()
    echoed = transcript.echo_prompt("see @notes.md")
    transcript.add(Entry("notice", text="Attached: notes.md"))  # what the app says as it sends the prompt
    sent = 'see @notes.md\n\n<attached-file path="notes.md" lines="2">\none\ntwo\n</attached-file>'
    step = transcript.apply(TurnStarted(sent, "s"))
    assert step.changed == [] and step.added == [] and echoed.text == "see @notes.md"
    resumed = transcript_of([TurnStarted(sent, "s")])
    assert [(e.kind, e.text) for e in resumed.entries] == [(e.kind, e.text) for e in transcript.entries]
    assert [(e.kind, e.text) for e in resumed.entries] == [("user", "see @notes.md"), ("notice", "Attached: notes.md")]


def test_a_failed_turn_reads_the_same_wherever_it_is_folded() -> None:
    [entry] = transcript_of([TurnFailed("the model server rejected the request", kind="bad_request")]).entries
    assert (entry.kind, entry.level, entry.text) == ("notice", "error", "turn failed (bad_request): the model server rejected the request.")


def test_a_cancelled_turn_read_back_shows_which_calls_finished_and_which_were_stopped() -> None:
    records = [
        {"type": "event", "event": "TurnStarted", "data": {"prompt": "go", "session_id": "s"}},
        {"type": "event", "event": "ToolCallStarted", "data": {"call_id": "a", "name": "run_shell", "arguments": {}}},
        {"type": "event", "event": "ToolCallStarted", "data": {"call_id": "b", "name": "run_shell", "arguments": {}}},
        {"type": "event", "event": "ToolCallFinished",
         "data": {"call_id": "a", "name": "run_shell", "result": "ok", "is_error": False, "duration_ms": 3.0}},
        {"type": "cancelled", "time": 1.0},
        {"type": "event", "event": "TurnStarted", "data": {"prompt": "next", "session_id": "s"}},
    ]
    events = decode_events(records).events
    assert isinstance(events[4], TurnCancelled)
    entries = transcript_of(events).entries
    first, second = (entry for entry in entries if entry.kind == "tool")
    assert (first.result, first.is_error, first.cancelled) == ("ok", False, False)
    assert (second.result, second.is_error, second.cancelled) == (CANCELLED_CALL, True, True)
    assert [(e.kind, e.text) for e in entries if e.kind != "tool"] == [("user", "go"), ("notice", "Turn cancelled."), ("user", "next")]


def test_a_call_still_running_when_the_session_ended_reads_back_as_interrupted_not_running() -> None:
    entries = transcript_of([TurnStarted("go", "s"), ToolCallStarted("a", "run_shell", {})]).entries
    call = entries[-1]
    assert (call.result, call.is_error, call.cancelled) == (INTERRUPTED_CALL, True, False)
