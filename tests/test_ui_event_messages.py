"""Core events reach the conversation as ShowEvent messages: a turn's in the order the agent yielded them, each shown
before the next (and before an approval asks), and the change feed's through the same queue."""

from __future__ import annotations

from pathlib import Path

from textual._context import active_message_pump
from textual.message import Message

from tests.fake_messages_api import reply, text, tool_use
from tests.scripted_model import ScriptedModel
from tests.ui_support import SIZE, approved_bang, make_app, ready, send, tool_source, turn_answered, wait_until
from tui_agent.core.events import CatalogChanged, Notice, ToolAuthored, ToolCallFinished, ToolCallStarted, TurnFinished, Usage
from tui_agent.ui.catalog_sync import OUTSIDE_EDIT
from tui_agent.ui.event_messages import ShowEvent
from tui_agent.ui.screens.approval import ApprovalScreen
from tui_agent.ui.widgets.conversation import Conversation


class ShownEvents:
    """Every ShowEvent as it is dispatched: the event, whether its sender waits, and which widget handles it."""

    def __init__(self) -> None:
        self.seen: list[tuple[object, bool, object]] = []

    def __call__(self, message: Message) -> None:
        if isinstance(message, ShowEvent):
            self.seen.append((message.event, message.awaited, active_message_pump.get()))

    def kinds(self, *, awaited: bool) -> list[str]:
        return [type(event).__name__ for event, was_awaited, _ in self.seen if was_awaited is awaited]


async def test_a_turns_events_and_the_feeds_arrive_at_the_conversation_as_messages(repo: Path, scripted: ScriptedModel) -> None:
    scripted.enqueue(reply(text("Writing it."), tool_use("create_tool", {"name": "double", "source": tool_source("double")})),
                reply(text("Done.")))
    shown = ShownEvents()
    app = make_app(repo, client=scripted)
    async with app.run_test(size=SIZE, message_hook=shown) as pilot:
        await ready(pilot)
        await send(pilot, app, "make a doubling tool")
        await wait_until(pilot, lambda: turn_answered(app, "Done."), timeout=30, message="the turn to finish")
        await wait_until(pilot, lambda: "ToolAuthored" in shown.kinds(awaited=False), message="the feed's authored event")
        await pilot.pause(0.2)

        assert {type(pump) for _, _, pump in shown.seen} == {Conversation}  # handled by the conversation, nobody else
        turn = [event for event, awaited, _ in shown.seen if awaited]
        kinds = [type(event).__name__ for event in turn]
        calls = [event for event in turn if isinstance(event, (ToolCallStarted, ToolCallFinished))]
        assert [type(event) for event in calls] == [ToolCallStarted, ToolCallFinished] and calls[0].name == "create_tool"
        assert kinds.index("TextDelta") < kinds.index("ToolCallStarted") < kinds.index("ToolCallFinished")
        assert kinds[-1] == "TurnFinished" and isinstance(turn[-1], TurnFinished)
        assert any(isinstance(event, Usage) for event in turn)
        # the authoring reaches the app through the change feed, posted without waiting, and is shown once
        assert "ToolAuthored" not in kinds
        authored = [event for event, awaited, _ in shown.seen if not awaited and isinstance(event, ToolAuthored)]
        assert [event.name for event in authored] == ["double"]
        assert [(entry.kind, entry.tool) for entry in app.conversation.entries] == [
            ("user", ""), ("assistant", ""), ("tool", "create_tool"), ("assistant", "")]


async def test_a_call_is_shown_before_its_approval_asks(dirty_repo: Path, scripted: ScriptedModel) -> None:
    scripted.enqueue(reply(tool_use("write_file", {"path": "docs/notes.md", "content": "hello\n"})), reply(text("Wrote it.")))
    shown = ShownEvents()
    app = make_app(dirty_repo, client=scripted)
    async with app.run_test(size=SIZE, message_hook=shown) as pilot:
        await ready(pilot)
        await send(pilot, app, "write notes")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), timeout=20, message="the approval modal")
        # the call's start was posted, shown, and marked as the one waiting before the modal came up
        assert shown.kinds(awaited=True)[-1] == "ToolCallStarted"
        waiting = [entry for entry in app.conversation.tool_entries() if entry.result is None]
        assert len(waiting) == 1 and waiting[0].awaiting_approval and waiting[0].tool == "write_file"
        await pilot.press("y")
        await wait_until(pilot, lambda: turn_answered(app, "Wrote it."), timeout=30, message="the turn to finish")
        assert not waiting[0].awaiting_approval and waiting[0].result is not None


async def test_a_feed_event_arriving_as_the_app_closes_is_dropped(repo: Path) -> None:
    """The change feed's listeners run on other threads: an event may reach the app after its screen is gone."""
    app = make_app(repo)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
    app.turns.show_feed_event(Notice("late news"))  # no conversation to show it: dropped, nothing raised
    app.catalog_sync.receive(CatalogChanged(("double",), OUTSIDE_EDIT))  # nor a catalog pane to mark it new in
    assert not app.turns.events.post(ShowEvent(Notice("later still")))


async def test_a_bang_commands_call_and_live_output_arrive_as_messages(repo: Path) -> None:
    """`!command` is the UI's own run, but its block is drawn as a turn's run_shell is: from posted core events, the
    output live while it runs (before the result), then the call's end."""
    shown = ShownEvents()
    app = make_app(repo, sandbox_tier="rlimits", trust_project=True)
    async with app.run_test(size=SIZE, message_hook=shown) as pilot:
        await ready(pilot)
        entry = await approved_bang(pilot, app, "echo first-line; sleep 1.5; echo second-line")
        await wait_until(pilot, lambda: "first-line" in entry.live, timeout=30, message="the first line, live")
        assert entry.result is None and "second-line" not in entry.live
        await wait_until(pilot, lambda: entry.result is not None, timeout=30, message="the command's end")
        assert "first-line\nsecond-line" in entry.result and not entry.is_error
        assert {type(pump) for _, _, pump in shown.seen} == {Conversation}
        kinds = [type(event).__name__ for event, _, _ in shown.seen]
        assert kinds[0] == "ToolCallStarted" and kinds[-1] == "ToolCallFinished" and "ToolOutputDelta" in kinds
        assert [entry.kind for entry in app.conversation.entries].count("tool") == 1


async def test_esc_stops_a_bang_command_as_its_block_says(repo: Path, scripted: ScriptedModel) -> None:
    scripted.enqueue(reply(text("Noted.")))
    app = make_app(repo, client=scripted, sandbox_tier="rlimits")
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        entry = await approved_bang(pilot, app, "echo started; sleep 60")
        await wait_until(pilot, lambda: "started" in entry.live, timeout=30, message="the command running")
        assert app.busy and app.turns.running
        await send(pilot, app, "queued meanwhile")  # one thing at a time: it waits for the command
        assert app.turns.queue and not any(e.kind == "user" for e in app.conversation.entries)
        await pilot.press("escape")
        await wait_until(pilot, lambda: entry.result is not None, timeout=10, message="the command stopped")
        assert entry.cancelled and entry.is_error and "you stopped the command" in entry.result
        assert entry.duration_ms is not None and entry.duration_ms < 30_000
        await wait_until(pilot, lambda: turn_answered(app, "Noted."), timeout=30, message="the queued prompt sent after it")
        assert "you stopped the command" in str(scripted.requests[-1].messages[-1])  # the model is told
