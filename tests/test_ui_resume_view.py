"""After /clear then /resume the conversation holds each resumed entry once and follows: the layout's own scroll changes
(an anchored view shorter than the pane) never slide the window as if the reader had scrolled to the top."""

from __future__ import annotations

import json
from pathlib import Path

from textual.app import App

from tests.fake_messages_api import reply, text
from tests.scripted_model import ScriptedModel
from tests.ui_support import make_app, ready, wait_until
from tui_agent.ui.app import TuiAgentApp
from tui_agent.ui.transcript import Transcript
from tui_agent.ui.widgets.conversation import Conversation
from tui_agent.ui.widgets.entry_window import INITIAL_WINDOW
from tui_agent.ui.widgets.messages import Entry


def write_session(root: Path, session_id: str, turns: int) -> None:
    """A session as the core writes it, with `turns` one-line questions and answers (two entries a turn)."""
    lines: list[dict[str, object]] = [{"type": "session", "id": session_id, "model": "m"}]
    for turn in range(turns):
        prompt, answer = f"question {turn}", f"answer {turn}"
        lines += [
            {"type": "event", "event": "TurnStarted", "data": {"prompt": prompt, "session_id": session_id}},
            {"type": "message", "message": {"role": "user", "content": prompt}},
            {"type": "event", "event": "TextDelta", "data": {"text": answer}},
            {"type": "message", "message": {"role": "assistant", "content": [{"type": "text", "text": answer}]}},
        ]
    folder = root / ".agent" / "sessions"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{session_id}.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))


def shown_entries(conversation: Conversation) -> list[Entry]:
    """The entries of the message widgets in the pane, top to bottom (a widget left over or mounted twice shows here)."""
    return [widget.entry for widget in conversation.children if isinstance(getattr(widget, "entry", None), Entry)]  # type: ignore[attr-defined]


def answered(app: TuiAgentApp) -> bool:
    last = app.conversation.entries[-1]
    return not app.turns.running and last.kind == "assistant" and last.text.endswith("The next answer.")


def resumed(app: TuiAgentApp, session_id: str) -> bool:
    return any(entry.text == f"Resumed session {session_id}." for entry in app.conversation.entries)


async def test_a_resize_after_resume_keeps_the_view_following_and_each_entry_once(repo: Path, scripted: ScriptedModel) -> None:
    """The newest window of a resumed session fits the pane, with entries above it: a resize (a layout that clamps the
    anchored view's offset to 0) loaded the earlier ones and released the anchor, so the next answer arrived out of
    sight under a "new below" marker although the person had never scrolled."""
    write_session(repo, "earlier", turns=INITIAL_WINDOW // 2 + 3)
    scripted.enqueue(reply(text("\n\n".join(f"Paragraph {number}." for number in range(40)) + "\n\nThe next answer.")))
    app = make_app(repo, client=scripted)
    async with app.run_test(size=(200, 80)) as pilot:  # tall: the resumed entries fit, the slid-up window too
        await ready(pilot)
        app.prompt_area.insert("/clear")
        await pilot.press("enter")
        await wait_until(pilot, lambda: any("new session" in entry.text for entry in app.conversation.entries), message="the clear")
        app.prompt_area.insert("/resume earlier")
        await pilot.press("enter")
        await wait_until(pilot, lambda: resumed(app, "earlier"), message="the resumed session")
        await pilot.pause(0.3)
        conversation = app.conversation
        assert conversation.first_mounted > 0 and conversation.max_scroll_y == 0  # entries above; the window fits the pane

        await pilot.resize_terminal(180, 80)
        await pilot.pause(0.3)
        assert conversation.following and not conversation.new_below.display
        assert shown_entries(conversation) == conversation.entries[conversation.first_mounted : conversation.last_mounted]

        app.prompt_area.insert("and now?")
        await pilot.press("enter")
        await wait_until(pilot, lambda: answered(app), timeout=30, message="the next turn")
        await pilot.pause(0.3)
        assert conversation.following and not conversation.new_below.display
        last = conversation._widgets[id(conversation.entries[-1])]
        view = conversation.content_region
        assert view.y < last.region.bottom <= view.bottom, (last.region, view)  # the answer's end is in sight
        shown = shown_entries(conversation)
        assert shown == conversation.entries[conversation.first_mounted : conversation.last_mounted]
        assert len({id(entry) for entry in shown}) == len(shown)


async def test_clear_then_resume_shows_each_entry_once_and_the_end(repo: Path, scripted: ScriptedModel) -> None:
    """The newcomer e2e's path at the Pilot level: a conversation taller than the pane, /clear, /resume from the picker."""
    from tui_agent.ui.screens.pickers import ChoiceScreen

    write_session(repo, "earlier", turns=7)
    app = make_app(repo, client=scripted)
    async with app.run_test(size=(200, 50)) as pilot:
        await ready(pilot)
        for number in range(12):
            await app.add_notice(f"notice {number}\n" + "line\n" * 4)
        app.prompt_area.insert("/clear")
        await pilot.press("enter")
        await wait_until(pilot, lambda: any("new session" in entry.text for entry in app.conversation.entries), message="the clear")
        app.prompt_area.insert("/resume")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ChoiceScreen), message="the session picker")
        await pilot.press("enter")
        await wait_until(pilot, lambda: resumed(app, "earlier"), message="the resumed session")
        await pilot.pause(0.3)
        conversation = app.conversation
        assert shown_entries(conversation) == conversation.entries  # nothing left from before /clear, nothing twice
        assert [entry.text for entry in conversation.entries if entry.kind == "user"] == [f"question {turn}" for turn in range(7)]
        assert conversation.following and not conversation.new_below.display


class OnePane(App[None]):
    def compose(self):  # type: ignore[no-untyped-def]
        yield Conversation(id="conversation")


async def test_a_slide_up_while_the_newest_entries_mount_shows_each_entry_once() -> None:
    """ctrl+u (or PageUp at the top) while a resumed transcript's first step was still mounting showed that step's
    entries twice: the slide started from the window's old top edge."""
    transcript = Transcript()
    for number in range(3 * INITIAL_WINDOW):
        transcript.add(Entry("notice", text=f"entry {number}"))
    app = OnePane()
    async with app.run_test(size=(100, 30)) as pilot:
        conversation = app.query_one(Conversation)
        mount_all = conversation.mount_all
        slid: list[int] = []

        def slide_up_during_the_first_mount(*args, **kwargs):  # type: ignore[no-untyped-def]
            mounting = mount_all(*args, **kwargs)
            if not slid:
                slid.append(conversation.first_mounted)
                conversation.load_earlier()  # what a reader's ctrl+u does, arriving while the step mounts
            return mounting

        conversation.mount_all = slide_up_during_the_first_mount  # type: ignore[method-assign]
        await conversation.load_transcript(transcript)
        await pilot.pause(0.2)
        shown = shown_entries(conversation)
        assert slid and len({id(entry) for entry in shown}) == len(shown), [entry.text for entry in shown]
        assert shown == conversation.entries[conversation.first_mounted : conversation.last_mounted]
