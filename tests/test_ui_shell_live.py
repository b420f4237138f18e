"""A running shell command's output shows in its tool block as it comes (a turn's run_shell and `!command` alike),
its newest lines only; the result replaces it when the command ends."""

from __future__ import annotations

from pathlib import Path

from tests.fake_messages_api import reply, text, tool_use
from tests.scripted_model import ScriptedModel
from tests.test_ui_turn import send
from tests.ui_support import SIZE, approved_bang, make_app, ready, turn_answered, wait_until
from tui_agent.ui.app import TuiAgentApp
from tui_agent.ui.live_output import LIVE_CHARS, LIVE_LINES, live_tail, live_text
from tui_agent.ui.widgets.messages import Entry, ToolCallBlock


def block_of(app: TuiAgentApp, entry: Entry) -> ToolCallBlock | None:
    return next((w for w in app.conversation.children if isinstance(w, ToolCallBlock) and w.entry is entry), None)


def shows_live(app: TuiAgentApp, entry: Entry, line: str) -> bool:
    """The block, still folded, shows `line` on screen (not in its title: the commands print words they do not contain)."""
    block = block_of(app, entry)
    return block is not None and block.collapsed and line in app.export_screenshot()


async def test_a_turns_shell_command_shows_its_first_line_before_it_ends(repo: Path, scripted: ScriptedModel) -> None:
    command = "seq 1 300; printf 'first-%s\\n' line; sleep 3; printf 'second-%s\\n' line"  # the title shows no output
    scripted.enqueue(reply(tool_use("run_shell", {"command": command})), reply(text("done")))
    (repo / ".agent").mkdir()
    (repo / ".agent" / "config.toml").write_text('[permissions]\nallow = ["run_shell"]\n')
    app = make_app(repo, client=scripted, sandbox_tier="rlimits")
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, app, "run it")
        await wait_until(pilot, lambda: any(entry.kind == "tool" for entry in app.conversation.entries), timeout=30, message="the call")
        entry = next(entry for entry in app.conversation.entries if entry.kind == "tool")
        await wait_until(pilot, lambda: shows_live(app, entry, "first-line"), timeout=30, message="the first line, live")
        assert entry.result is None and "second-line" not in entry.live  # the command still sleeps
        assert len(entry.live.split("\n")) <= LIVE_LINES + 1 and "300" in entry.live and "\n1\n" not in entry.live
        await wait_until(pilot, lambda: turn_answered(app, "done"), timeout=60, message="the turn")
        block = block_of(app, entry)
        assert block is not None and not block._live_view.display and entry.live == ""
        assert entry.result is not None and "first-line\nsecond-line" in entry.result
        assert "second-line" in str(scripted.requests[-1].messages[-1])  # the model got the whole output at the end


async def test_a_bang_command_streams_into_its_block_too(repo: Path, scripted: ScriptedModel) -> None:
    app = make_app(repo, client=scripted, sandbox_tier="rlimits")
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        entry = await approved_bang(pilot, app, "printf 'bang-%s\\n' first; sleep 3; printf 'bang-%s\\n' second")
        await wait_until(pilot, lambda: shows_live(app, entry, "bang-first"), timeout=30, message="the first line, live")
        assert entry.result is None and "bang-second" not in entry.live
        await wait_until(pilot, lambda: entry.result is not None, timeout=60, message="the result")
        assert "bang-first\nbang-second" in (entry.result or "")


def test_the_kept_output_is_bounded_and_a_redrawn_progress_line_shows_its_latest_state() -> None:
    kept = ""
    for number in range(1000):
        kept = live_tail(kept, f"line {number}\n")
    assert kept.split("\n")[-2] == "line 999" and len(kept.split("\n")) <= LIVE_LINES + 1
    assert live_text(kept).plain.splitlines() == [f"line {number}" for number in range(1000 - LIVE_LINES, 1000)]
    assert len(live_tail("", "x" * 100_000)) == LIVE_CHARS  # one endless line
    assert live_text(live_tail(live_tail("", "10%\r50%"), "\r90%")).plain == "90%"


async def test_at_80x24_a_long_commands_title_keeps_its_timer_and_outcome_on_screen(repo: Path, scripted: ScriptedModel) -> None:
    command = "sleep 2.5; echo 'a command long enough to fill the whole title line of an 80 column terminal'"
    scripted.enqueue(reply(tool_use("run_shell", {"command": command})), reply(text("done")))
    (repo / ".agent").mkdir()
    (repo / ".agent" / "config.toml").write_text('[permissions]\nallow = ["run_shell"]\n')
    app = make_app(repo, client=scripted, sandbox_tier="rlimits")
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        await send(pilot, app, "run it")
        await wait_until(pilot, lambda: any(isinstance(w, ToolCallBlock) for w in app.conversation.children), timeout=30, message="the block")
        block = next(w for w in app.conversation.children if isinstance(w, ToolCallBlock))

        def on_screen(words: str) -> bool:
            label = block._title.label.plain
            return words in label and block._title.region.right <= block.content_region.right

        await wait_until(pilot, lambda: on_screen("running · 1."), timeout=30, message="the timer, inside the pane")
        assert "…" in block.title  # the command was shortened to make room
        await wait_until(pilot, lambda: turn_answered(app, "done"), timeout=60, message="the turn")
        await pilot.pause(0.2)
        assert on_screen(" ok · "), block._title.label.plain
