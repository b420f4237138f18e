"""The conversation's edge markers and "new below" hint act on the conversation they were given (a click loads or follows)."""

from __future__ import annotations

from textual.app import App, ComposeResult

from tui_agent.ui.transcript import Transcript
from tui_agent.ui.widgets.conversation import Conversation
from tui_agent.ui.widgets.messages import Entry


class OnlyConversation(App[None]):
    def compose(self) -> ComposeResult:
        yield Conversation(id="conversation")


async def test_clicking_the_earlier_marker_loads_earlier_entries_and_new_below_follows() -> None:
    transcript = Transcript()
    for number in range(60):
        transcript.add(Entry("notice", text=f"notice {number}\n" + "line\n" * 3))
    app = OnlyConversation()
    async with app.run_test(size=(80, 24)) as pilot:
        conversation = app.query_one(Conversation)
        await conversation.load_transcript(transcript)
        await pilot.pause(0.3)
        first = conversation.first_mounted
        assert first > 0 and conversation._earlier.display
        conversation._earlier.on_click()  # (a click on it; the marker is above the view here)
        await pilot.pause(0.3)
        assert conversation.first_mounted < first

        conversation.new_below.display = True
        await pilot.pause(0.1)
        await pilot.click(conversation.new_below)
        await pilot.pause(0.5)
        assert conversation.at_end and not conversation.new_below.display
