"""Long content folds in place and unfolds with a click: a large paste sent as a prompt shows as its first lines and
one line saying how much was pasted; a tool's long output shows all of it when its result is clicked."""

from __future__ import annotations

from pathlib import Path

import io

from rich.console import Console
from textual.widgets import Static
from textual.widgets.collapsible import CollapsibleTitle

from tests.fake_messages_api import reply, text, tool_use
from tests.scripted_model import ScriptedModel
from tests.ui_support import make_app, ready, turn_answered, wait_until
from tests.test_ui_turn import send
from tui_agent.ui.widgets.messages import ToolCallBlock, UserMessage


def shown(widget: Static) -> str:
    """The text a Static shows now (its content, rendered without styles)."""
    console = Console(width=200, color_system=None, record=True, file=io.StringIO())
    console.print(widget.content)
    return console.export_text()


async def test_a_large_paste_is_one_folded_block_that_a_click_unfolds(repo: Path, scripted: ScriptedModel) -> None:
    pasted = "\n".join(f"log line {i:04d} " + "x" * 50 for i in range(100))  # ~6,000 characters
    scripted.enqueue(reply(text("seen")))
    app = make_app(repo, client=scripted)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await send(pilot, app, pasted)
        await wait_until(pilot, lambda: turn_answered(app, "seen"), timeout=60, message="the reply")
        message = next(widget for widget in app.conversation.query(UserMessage))
        assert "log line 0099" not in shown(message) and "pasted text: 6," in shown(message)
        assert shown(message).count("\n") <= 4
        assert scripted.requests[-1].messages[-1]["content"][0]["text"] == pasted  # the model gets all of it
        await pilot.click(message)
        await wait_until(pilot, lambda: "log line 0099" in shown(message), message="the paste unfolded")


async def test_a_long_tool_output_shows_in_full_when_its_result_is_clicked(repo: Path, scripted: ScriptedModel) -> None:
    (repo / "big.txt").write_text("".join(f"row {i:05d}\n" for i in range(2000)))  # 20,000 characters
    scripted.enqueue(reply(tool_use("read_file", {"path": "big.txt"})), reply(text("read it")))
    app = make_app(repo, client=scripted)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await send(pilot, app, "read big.txt")
        await wait_until(pilot, lambda: turn_answered(app, "read it"), timeout=60, message="the reply")
        block = next(widget for widget in app.conversation.query(ToolCallBlock))
        block.collapsed = False
        await pilot.pause(0.3)
        result = block._result_view
        assert "more characters: click" in shown(result) and "row 01999" not in shown(result)
        block.scroll_visible(animate=False)
        await pilot.pause(0.2)
        await pilot.click(result)
        await wait_until(pilot, lambda: "row 01999" in shown(result), message="the whole output")
        assert "more characters" not in shown(result)


async def test_a_long_tool_output_shows_in_full_from_the_keyboard(repo: Path, scripted: ScriptedModel) -> None:
    """enter on a call's title: unfold, then the whole cut result, then fold (no mouse needed)."""
    (repo / "big.txt").write_text("".join(f"row {i:05d}\n" for i in range(2000)))
    scripted.enqueue(reply(tool_use("read_file", {"path": "big.txt"})), reply(text("read it")))
    app = make_app(repo, client=scripted)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await send(pilot, app, "read big.txt")
        await wait_until(pilot, lambda: turn_answered(app, "read it"), timeout=60, message="the reply")
        block = next(widget for widget in app.conversation.query(ToolCallBlock))
        block.query_one(CollapsibleTitle).focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: not block.collapsed, message="unfolded")
        result = block._result_view
        assert "more characters" in shown(result) and "enter/click: show all" in str(block.query_one(CollapsibleTitle).label)
        await pilot.press("enter")
        await wait_until(pilot, lambda: "row 01999" in shown(result), message="the whole output")
        assert not block.collapsed and "enter/click: fold" in str(block.query_one(CollapsibleTitle).label)
        await pilot.press("enter")
        await wait_until(pilot, lambda: block.collapsed, message="folded")
