"""A finished reply is cut into prose and its top-level code blocks; a recycled reply widget shows its new entry's parts."""

from __future__ import annotations

from pathlib import Path

from textual import events
from textual.app import App, ComposeResult
from textual.selection import Selection

from tests.fake_messages_api import reply, text
from tests.scripted_model import ScriptedModel
from tests.ui_support import make_app, ready, send, turn_answered, wait_until
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


WIDE = "x = [" + ", ".join(f"item_{n}" for n in range(60)) + "]"
READING = "\n\n".join(f"Paragraph {n}." for n in range(40))


async def test_keys_on_a_focused_code_block_scroll_it_sideways_and_the_rest_scroll_the_conversation(repo: Path,
                                                                                                  scripted: ScriptedModel) -> None:
    answer = f"{READING}\n\n```python\n{WIDE}\n```\n\n```\nfits\n```\n\nEnd."
    scripted.enqueue(reply(text(answer)))
    app = make_app(repo, client=scripted)
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        await send(pilot, app, "show me")
        await wait_until(pilot, lambda: turn_answered(app, answer), timeout=60, message="the reply")
        await wait_until(pilot, lambda: len(app.conversation.query(ScrollingCode)) == 2, message="the code blocks")
        wide, fits = app.conversation.query(ScrollingCode)
        conversation = app.conversation
        # a block scrolls sideways once laid out (before that, end is the conversation's): a person sees it first
        await wait_until(pilot, lambda: wide.allow_horizontal_scroll and not fits.allow_horizontal_scroll, message="the blocks laid out")
        wide.focus()
        await pilot.press("end")
        await wait_until(pilot, lambda: wide.scroll_x == wide.max_scroll_x > 0, message="the wide block at its end")
        await pilot.press("left")
        await wait_until(pilot, lambda: 0 < wide.scroll_x < wide.max_scroll_x, message="one step back")
        before = conversation.scroll_y
        await pilot.press("pageup")  # not the block's: it scrolls sideways only
        await wait_until(pilot, lambda: conversation.scroll_y < before, message="the conversation paged up")
        fits.focus()
        await pilot.press("home")  # a block that fits leaves home and end to the conversation
        await wait_until(pilot, lambda: conversation.scroll_y == 0, message="the conversation at its top")


async def test_a_sideways_wheel_notch_moves_a_code_block_one_step_as_a_shift_wheel_notch_does() -> None:
    app = OneReply(Entry("assistant", f"Wide:\n\n```python\n{WIDE}\n```"))
    async with app.run_test(size=(60, 20)) as pilot:
        code = app.query_one(ScrollingCode)
        await pilot.pause()
        assert code.max_scroll_x > 3 * app.scroll_sensitivity_x
        notches: list[events.MouseEvent] = [
            events.MouseScrollDown(code, 2, 1, 0, 0, 0, shift=True, meta=False, ctrl=False),
            events.MouseScrollRight(code, 2, 1, 0, 0, 0, shift=False, meta=False, ctrl=False),
            events.MouseScrollRight(code, 2, 1, 0, 0, 0, shift=False, meta=False, ctrl=False),
            events.MouseScrollLeft(code, 2, 1, 0, 0, 0, shift=False, meta=False, ctrl=False),
        ]
        for steps, notch in zip([1, 2, 3, 2], notches, strict=True):
            code.post_message(notch)
            await pilot.pause()
            await pilot.wait_for_animation()
            assert code.scroll_x == steps * app.scroll_sensitivity_x, (type(notch).__name__, code.scroll_x)


async def test_a_reply_whose_text_gains_a_code_block_gets_the_widget_for_it(repo: Path, scripted: ScriptedModel) -> None:
    app = make_app(repo, client=scripted)
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        entry = Entry("assistant", "plain at first")
        await app.conversation.add(entry)
        assert isinstance(app.conversation._widgets[id(entry)], AssistantText)
        entry.text = "Now:\n\n```\nprint('x')\n```"
        app.conversation.refresh_entry(entry)
        await wait_until(pilot, lambda: len(app.conversation.query(ScrollingCode)) == 1, message="the code block")
        widget = app.conversation._widgets[id(entry)]
        assert isinstance(widget, FencedReply) and widget.parent is app.conversation
        assert not [w for w in app.conversation.query(AssistantText) if w.entry is entry]  # the old widget is gone
