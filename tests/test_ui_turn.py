"""Agent turns in the real app against the fake Messages API: streaming, tool blocks, authoring, approvals, Escape, /diff."""

from __future__ import annotations

import re
from pathlib import Path

from tests.fake_messages_api import reply, text, tool_use
from tests.scripted_model import ScriptedModel
from tests.gitrepo import git, user_state
from tests.ui_support import (send, SIZE, answer_confirm, authored_announcements, make_app, notifications, ready, row_names, tool_source,
                                   turn_answered, wait_until)
from tui_agent.ui.palette import palette_commands
from tui_agent.ui.screens.approval import ApprovalScreen
from tui_agent.ui.widgets.messages import AssistantMessage, AssistantText, ToolCallBlock, tool_title
from tui_agent.core.runtime_state import agent_of, catalog_of


async def test_a_turn_streams_text_and_shows_an_authored_tool(repo: Path, scripted: ScriptedModel) -> None:
    source = tool_source("double")
    scripted.enqueue(
        reply(text("I'll write a **tool** for that."), tool_use("create_tool", {"name": "double", "source": source})),
        reply(text("Done: `double` is in the catalog.")),
    )
    app = make_app(repo, client=scripted)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        assert app.header.model == agent_of(app.runtime).model
        await send(pilot, app, "make a doubling tool")
        await wait_until(pilot, lambda: turn_answered(app, "Done: `double` is in the catalog."), timeout=30, message="the turn to finish")
        await pilot.pause(0.2)

        kinds = [(entry.kind, entry.tool) for entry in app.conversation.entries]
        assert kinds == [("user", ""), ("assistant", ""), ("tool", "create_tool"), ("assistant", "")]
        texts = [entry.text for entry in app.conversation.entries if entry.kind == "assistant"]
        assert texts == ["I'll write a **tool** for that.", "Done: `double` is in the catalog."]
        # streamed through a live Markdown widget, then kept as one light widget each
        assert not any(isinstance(w, AssistantMessage) for w in app.conversation.children)
        assert [w.entry.text for w in app.conversation.children if isinstance(w, AssistantText)] == texts
        block = next(w for w in app.conversation.children if isinstance(w, ToolCallBlock))
        assert block.entry.authored and block.has_class("-authored") and block.collapsed  # folded, with a one-line summary
        assert re.search(r"^create_tool double · \d+ lines · tests (none|\d+/\d+ passed)  ok · (\d+ ms|\d+\.\d s) · authored$", block.title), block.title
        assert re.search(r"\((enter/click|enter): unfold\)$", str(block._title.label))  # as long a hint as fits
        block.collapsed = False
        assert re.search(r"\((enter/click|enter): fold\)$", str(block._title.label))
        assert block.entry.source == source and not block.entry.is_error and block.entry.duration_ms
        assert "authored" in block.title and "create_tool double" in block.title
        await wait_until(pilot, lambda: any(message.startswith("tool double created · ") for message in authored_announcements(app)),
                         message="the authored tool announced")
        await wait_until(pilot, lambda: row_names(app) == ["double"], message="the new tool in the catalog pane")
        assert git(repo, "log", "-1", "--format=%s").strip() == "tuiagent: add tool double"
        assert app.usage.tokens_in > 0 and app.usage.tokens_out > 0 and not app.header.busy

        await send(pilot, app, "/undo")  # the session created it, so undo prunes it (a new commit)
        await answer_confirm(pilot)
        await wait_until(pilot, lambda: git(repo, "log", "-1", "--format=%s").strip() == "tuiagent: prune tool double", message="the undo")
        await wait_until(pilot, lambda: row_names(app) == [], message="the tool gone from the pane")


async def test_approval_modal_shows_the_diff_and_turn_edits_reach_the_diff_pane(dirty_repo: Path, scripted: ScriptedModel) -> None:
    scripted.enqueue(
        reply(tool_use("write_file", {"path": "docs/notes.md", "content": "# Notes\nhello\n"})),
        reply(text("Wrote the notes.")),
        reply(tool_use("write_file", {"path": "docs/other.md", "content": "nope\n"})),
        reply(text("Fine, I won't.")),
    )
    before = user_state(dirty_repo)
    app = make_app(dirty_repo, client=scripted)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, app, "write notes")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), timeout=20, message="the approval modal")
        modal = app.screen
        assert isinstance(modal, ApprovalScreen) and modal.kind == "write" and "+hello" in modal.detail
        await pilot.press("y")
        await wait_until(pilot, lambda: turn_answered(app, "Wrote the notes."), timeout=20, message="the first turn")
        assert (dirty_repo / "docs" / "notes.md").read_text() == "# Notes\nhello\n"
        await wait_until(pilot, lambda: app.diff_pane.subject == "turn", message="the turn's edits in the diff pane")
        assert "+hello" in app.diff_pane.diff_text and "docs/notes.md" in app.diff_pane.diff_text
        assert "README.md" not in app.diff_pane.diff_text  # the user's own changes are not the agent's edits

        await send(pilot, app, "write another")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), timeout=20, message="the second approval")
        await pilot.press("n")
        await wait_until(pilot, lambda: turn_answered(app, "Fine, I won't."), timeout=20, message="the second turn")
        assert not (dirty_repo / "docs" / "other.md").exists()
        assert any(entry.kind == "tool" and entry.is_error and "denied" in (entry.result or "") for entry in app.conversation.entries)
    (dirty_repo / "docs" / "notes.md").unlink()
    (dirty_repo / "docs").rmdir()
    assert user_state(dirty_repo) == before


async def test_escape_cancels_the_turn_and_the_next_turn_works(repo: Path, scripted: ScriptedModel) -> None:
    long_text = "word " * 400
    rest = scripted.hold(reply(text(long_text)), after_chars=120)  # the reply stops mid-stream until the test lets it on
    scripted.enqueue(reply(text("Back again.")))
    app = make_app(repo, client=scripted)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, app, "talk a lot")
        await wait_until(pilot, lambda: app.conversation.streaming and len(app.conversation.entries[-1].text) > 30, timeout=20, message="streaming")
        await pilot.press("escape")
        rest.set()  # were the stream not stopped, the rest would show now
        await wait_until(pilot, lambda: not app.turns.running, message="the turn to stop")
        shown = app.conversation.entries[-2].text
        assert 0 < len(shown) < len(long_text)
        assert app.conversation.entries[-1].text == "Turn cancelled." and not app.header.busy
        await pilot.pause(0.3)
        assert len(app.conversation.entries[-2].text) == len(shown)  # nothing streams after the cancel
        messages = agent_of(app.runtime).messages
        assert messages[-1]["role"] == "assistant" and "[interrupted by the user]" in messages[-1]["content"][0]["text"]

        await send(pilot, app, "are you there?")
        await wait_until(pilot, lambda: turn_answered(app, "Back again."), timeout=20, message="the next turn")
        assert app.conversation.entries[-1].text == "Back again."
        assert scripted.requests[-1].last_user_text() == "are you there?"


async def test_slash_commands_and_palette(repo: Path, scripted: ScriptedModel) -> None:
    app = make_app(repo, client=scripted)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await catalog_of(app.runtime).save("double", tool_source("double"))
        for command in ("/help", "/tools", "/recipes", "/model claude-test-model", "/nosuch"):
            await send(pilot, app, command)
            await pilot.pause(0.1)
        notices = [entry.text for entry in app.conversation.entries if entry.kind == "notice"]
        assert notices[0].startswith("Commands:") and "/resume" in notices[0]
        assert notices[1].startswith("1 tools (1 unused)")
        assert notices[2].startswith("No recipes yet")
        assert "claude-test-model" in notices[3] and agent_of(app.runtime).model == "claude-test-model" and app.header.model == "claude-test-model"
        assert "claude-test-model is not a model tuiagent knows" in notices[4]  # switched, with a warning
        assert "Unknown command /nosuch" in notices[5]
        app.catalog_pane.query_one("#catalog-filter").value = ""  # /recipes filtered the pane to recipes
        await pilot.pause(0.1)
        titles = [command.title for command in palette_commands(app, app.prompt_area, app.catalog_pane, app.diff_pane)]  # what the palette's TuiAgentCommands provider offers
        for expected in ("/help", "/tools", "/diff", "/undo", "/model", "/clear", "/resume", "/recipes", "Cancel the turn", "Prune double", "Revert double", "History double", "Drift double", "Run double", "View double"):
            assert expected in titles, expected
        await send(pilot, app, "/clear")
        await pilot.pause(0.1)
        assert [entry.kind for entry in app.conversation.entries] == ["notice"] and agent_of(app.runtime).messages == []


async def test_escape_stops_a_sandboxed_run(repo: Path, scripted: ScriptedModel) -> None:
    scripted.enqueue(reply(tool_use("run_python", {"code": "import time\ntime.sleep(60)"})), reply(text("Stopped.")))
    app = make_app(repo, client=scripted)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, app, "sleep a minute")
        await wait_until(pilot, lambda: any(e.kind == "tool" and e.tool == "run_python" for e in app.conversation.entries), message="the call")
        await pilot.pause(0.3)
        if isinstance(app.screen, ApprovalScreen):  # the rlimits tier asks before running Python
            await pilot.press("y")
        await pilot.pause(0.5)
        await pilot.press("escape")
        await wait_until(pilot, lambda: not app.turns.running, timeout=10, message="the cancel")
        call = next(e for e in app.conversation.entries if e.kind == "tool" and e.tool == "run_python")
        assert call.is_error and "cancelled" in (call.result or "")
        assert re.search(r"\)  cancelled · (\d{3} ms|\d+\.\d s)$", tool_title(call)), tool_title(call)  # it ran 0.5 s or more
        messages = agent_of(app.runtime).messages
        assert messages[-1]["role"] == "user" and messages[-1]["content"][0]["type"] == "tool_result"  # every tool_use answered
        await send(pilot, app, "ok?")
        await wait_until(pilot, lambda: turn_answered(app, "Stopped."), timeout=20, message="the next turn")


RECIPE = 'description = "Explain a file"\n[trigger]\non = "command"\n[action]\nprompt = "Explain {args}"\n'


async def test_create_recipe_is_announced_once_and_undone_once(repo: Path, scripted: ScriptedModel) -> None:
    scripted.enqueue(reply(tool_use("create_recipe", {"name": "explain", "source": RECIPE})), reply(text("recipe ready")))
    app = make_app(repo, client=scripted)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, app, "add an explain command")
        await wait_until(pilot, lambda: turn_answered(app, "recipe ready"), timeout=30, message="the turn to finish")
        await pilot.pause(0.3)
        assert [message.split(" · ")[0] for message in authored_announcements(app)] == ["recipe explain created"]
        authored = app.runtime.core.undo.turns(app.runtime.core.session)[-1].authored
        assert [(item.kind, item.name, item.created) for item in authored] == [("recipe", "explain", True)]
        assert sum("recipe explain created" in message for message in notifications(app)) == 1

        await send(pilot, app, "/undo")
        await answer_confirm(pilot)
        await wait_until(pilot, lambda: git(repo, "log", "-1", "--format=%s").strip() == "tuiagent: prune recipe explain", message="the undo")
        await send(pilot, app, "/undo")
        await wait_until(pilot, lambda: any("Nothing to undo" in (entry.text or "") for entry in app.conversation.entries),
                         message="nothing left to undo")
        assert not any("/undo failed" in (entry.text or "") for entry in app.conversation.entries)
