"""A finished reply is cut into prose and its top-level code blocks; a recycled reply widget shows its new entry's parts."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.selection import Selection

from tui_agent.ui.widgets.code_scroll import ScrollingCode
from tui_agent.ui.widgets.entry import Entry
from tui_agent.ui.widgets.prose_lines import ProseLines
from tui_agent.ui.widgets.reply import AssistantText, FencedReply, reply_widget
from tui_agent.ui.widgets.reply_parts import ReplyPart, reply_parts

FENCED = "Run:\n\n```sh\n  pytest -q\n```\n\n- a list\n  ```\n  nested stays in the prose\n  ```\n\nDone."


def test_top_level_fences_are_parts_and_nested_ones_stay_in_the_prose() -> None:
    assert reply_parts("just *prose*") == [ReplyPart("prose", "just *prose*")]
    parts = reply_parts(FENCED)
    assert [part.kind for part in parts] == ["prose", "code", "prose"]
    assert parts[1] == ReplyPart("code", "  pytest -q", "sh")  # its indentation kept
    assert "nested stays in the prose" in parts[2].text and parts[2].text.endswith("Done.")
    assert reply_parts("```python\nunclosed\n    still code") == [ReplyPart("code", "unclosed\n    still code", "python")]


class OneReply(App[None]):
    def __init__(self, entry: Entry) -> None:
        super().__init__()
        self.entry = entry

    def compose(self) -> ComposeResult:
        yield reply_widget(self.entry)


async def test_a_recycled_reply_shows_the_new_entrys_parts_and_copies_what_is_selected() -> None:
    app = OneReply(Entry("assistant", "Just:\n\n```\nls\n```"))
    async with app.run_test(size=(60, 20)) as pilot:
        reply = app.query_one(FencedReply)
        assert [type(child) for child in reply.children] == [ProseLines, ScrollingCode]
        reply.rebind(Entry("assistant", FENCED))
        await pilot.pause()
        assert [type(child) for child in reply.children] == [ProseLines, ScrollingCode, ProseLines]
        code = reply.query_one(ScrollingCode)
        assert code.get_selection(Selection(None, None)) == ("  pytest -q", "\n")
        first = reply.query_one(ProseLines)
        assert first.get_selection(Selection(None, None)) == ("Run:", "\n")  # the text shown, not the Markdown
        reply.rebind(Entry("assistant", "Other:\n\n```\nx = 1\n```\n\nAnd **more**."))
        await pilot.pause()
        assert [type(child) for child in reply.children] == [ProseLines, ScrollingCode, ProseLines]  # reused in place
        assert reply.query_one(ScrollingCode) is code and code.get_selection(Selection(None, None)) == ("x = 1", "\n")
        assert list(reply.query(ProseLines))[-1].get_selection(Selection(None, None)) == ("And more.", "\n")


async def test_a_reply_without_code_is_one_light_widget() -> None:
    app = OneReply(Entry("assistant", "plain **words** only"))
    async with app.run_test(size=(60, 20)) as pilot:
        reply = app.query_one(AssistantText)
        assert not reply.children and reply.get_selection(Selection(None, None)) == ("plain words only", "\n")
        reply.rebind(Entry("assistant", "other words"))
        await pilot.pause()
        assert reply.get_selection(Selection(None, None)) == ("other words", "\n")
