"""Everyday bugs of the TUI, each with the app as people run it: no model, a failed request, a resumed transcript, pruning."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path

import pytest

from tests.gitrepo import git
from tests.fake_messages_api import FakeMessagesAPI, reply, text, tool_use
from tests.scripted_model import ScriptedModel, refusal
from tests.test_ui_turn import send
from tests.ui_support import (SIZE, answer_confirm, make_app, notifications, ready, row_names, tool_source, turn_answered,
                              turn_failed_shown, wait_until)
from tui_agent.core.agent.model import ModelError
from tui_agent.core.errors import ErrorKind
from tui_agent.core.agent.conversation_summary import SUMMARY_HEADER, SUMMARY_INSTRUCTION
from tui_agent.ui.screens.approval import ApprovalScreen
from tui_agent.ui.turn import NOT_SENT
from tui_agent.ui.widgets.messages import ToolCallBlock, UserMessage, tool_outcome
from tui_agent.core.runtime_state import agent_of


@pytest.fixture
def no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def test_the_no_model_notice_breaks_its_lines_between_sentences() -> None:
    from tui_agent.ui.runtime_bridge import NO_MODEL

    for line in NO_MODEL.splitlines():  # a line cut mid-sentence reads as two notices at 80 columns
        assert line.endswith((".", "…")), line


async def test_without_a_model_a_prompt_goes_back_to_the_box_and_the_setup_note_is_not_repeated(repo: Path, no_model: None) -> None:
    app = make_app(repo)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, app, "hello there")
        await wait_until(pilot, lambda: app.prompt_area.text == "hello there", message="the prompt back in the box")
        app.prompt_area.load_text("")
        await send(pilot, app, "again")
        await wait_until(pilot, lambda: app.prompt_area.text == "again", message="the second prompt back in the box")
        await pilot.pause(0.2)
        notices = [entry.text for entry in app.conversation.entries if entry.kind == "notice"]
        assert sum("No model is configured" in notice for notice in notices) == 1, notices  # once, at start
        assert notices.count(NOT_SENT) == 2 and "\n" not in NOT_SENT


async def test_a_failed_request_says_once_where_the_prompt_went(repo: Path, scripted: ScriptedModel) -> None:
    scripted.enqueue(refusal(),
                     reply(text("ok")))
    app = make_app(repo, client=scripted)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, app, "try this")
        await wait_until(pilot, lambda: turn_failed_shown(app), timeout=60, message="the failed turn")
        await wait_until(pilot, lambda: app.prompt_area.text == "try this", message="the prompt back in the box")
        notices = [entry.text for entry in app.conversation.entries if entry.kind == "notice"]
        assert not any("not kept" in notice for notice in notices), notices
        assert sum("back in the input box" in notice for notice in notices) == 1, notices


async def test_an_undone_turn_and_a_cancelled_call_read_back_as_they_were(repo: Path, scripted: ScriptedModel) -> None:
    scripted.enqueue(reply(tool_use("write_file", {"path": "README.md", "content": "agent readme\n"})), reply(text("done")),
                reply(tool_use("run_shell", {"command": "sleep 30"})))
    (repo / ".agent").mkdir()
    (repo / ".agent" / "config.toml").write_text('[permissions]\nallow = ["write_file", "run_shell"]\n')
    app = make_app(repo, client=scripted, sandbox_tier="rlimits")
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, app, "change the readme")
        await wait_until(pilot, lambda: turn_answered(app, "done"), timeout=60, message="the turn")
        await send(pilot, app, "/undo")
        await answer_confirm(pilot)
        await wait_until(pilot, lambda: (repo / "README.md").read_text() == "# demo project\n", timeout=30, message="the undo")
        user = next(entry for entry in app.conversation.entries if entry.kind == "user")
        await wait_until(pilot, lambda: user.undone, message="the turn marked undone")
        widget = next(w for w in app.conversation.children if isinstance(w, UserMessage) and w.entry is user)
        assert "undone" in str(widget.render())
        await send(pilot, app, "sleep a while")
        await wait_until(pilot, lambda: any(e.kind == "tool" and e.tool == "run_shell" for e in app.conversation.entries), timeout=30,
                         message="the shell call running")
        await pilot.pause(0.5)
        await pilot.press("escape")
        await wait_until(pilot, lambda: not app.turns.running, timeout=30, message="the cancel")
        session_id = app.runtime.core.session.id

    app = make_app(repo, client=scripted, sandbox_tier="rlimits")
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, app, f"/resume {session_id}")
        await wait_until(pilot, lambda: any(e.text == f"Resumed session {session_id}." for e in app.conversation.entries),
                         message="the resumed session")
        users = [entry for entry in app.conversation.entries if entry.kind == "user"]
        assert [(entry.text, entry.undone) for entry in users[:2]] == [("change the readme", True), ("sleep a while", False)]
        shell = next(entry for entry in app.conversation.entries if entry.kind == "tool" and entry.tool == "run_shell")
        assert tool_outcome(shell) == "cancelled", tool_outcome(shell)


@pytest.mark.parametrize(("size", "target"), [(SIZE, "catalog-table"), ((80, 24), "conversation")])
async def test_tab_in_the_prompt_completes_or_moves_to_the_next_pane_never_the_filter(repo: Path, no_model: None,
                                                                                        size: tuple[int, int], target: str) -> None:
    app = make_app(repo)
    async with app.run_test(size=size) as pilot:
        await ready(pilot)
        app.prompt_area.focus()
        await pilot.press("slash", "h", "e", "l")
        await pilot.press("tab")
        assert app.prompt_area.text.startswith("/help") and app.focused is app.prompt_area
        app.prompt_area.load_text("")
        assert app.conversation.styles.background.a == 0
        await pilot.press("tab")
        await pilot.pause()
        assert app.focused is not None and app.focused.id == target, app.focused
        if target == "conversation":  # it shows it has the keys now (nothing on screen changed before)
            assert app.conversation.styles.background.a > 0


async def test_ctrl_c_clears_then_quits_on_the_second_press_with_no_toast_about_ctrl_q(repo: Path, no_model: None) -> None:
    app = make_app(repo)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        welcome = app.conversation.welcome
        assert welcome.display and "ctrl+p palette" in str(welcome.render()) and str(repo.name) in str(welcome.render())
        app.prompt_area.focus()
        app.prompt_area.insert("half a thought")
        await pilot.press("ctrl+c")
        assert app.prompt_area.text == "" and app.is_running
        await pilot.press("up")  # not lost: in the history
        assert app.prompt_area.text == "half a thought"
        app.prompt_area.load_text("")
        await pilot.press("ctrl+c")
        assert app.is_running and any("ctrl+c again" in message for message in notifications(app))
        assert not any("Do you want to quit" in str(n.title) for n in app._notifications)
        await pilot.press("ctrl+c")
        await wait_until(pilot, lambda: not app.is_running, message="the app to quit")
    assert app.lifecycle.farewell() == "tuiagent: nothing to resume from this run."


async def test_shift_tab_cycles_the_permission_mode_and_the_header_shows_it(repo: Path, scripted: ScriptedModel) -> None:
    scripted.enqueue(reply(tool_use("write_file", {"path": "notes.md", "content": "x\n"})), reply(text("refused, fine")), reply(text("hi")))
    app = make_app(repo, client=scripted)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        assert app.runtime.core.permissions.mode == "ask"
        await pilot.press("shift+tab")
        assert app.runtime.core.permissions.mode == "auto" and "auto" in app.header.render().plain
        await pilot.press("shift+tab")
        assert app.runtime.core.permissions.mode == "read-only" and "read-only" in app.header.render().plain
        await send(pilot, app, "write notes")  # refused without a modal: the mode is in force
        await wait_until(pilot, lambda: turn_answered(app, "refused, fine"), timeout=60, message="the refused turn")
        assert not (repo / "notes.md").exists()
        await pilot.press("shift+tab")
        assert app.runtime.core.permissions.mode == "plan" and "plan" in app.header.render().plain
        await pilot.press("shift+tab")
        assert app.runtime.core.permissions.mode == "ask" and "read-only" not in app.header.render().plain
        await send(pilot, app, "hello")
        await wait_until(pilot, lambda: turn_answered(app, "hi"), timeout=60, message="a second turn")
        assert app.lifecycle.farewell().startswith(f"tuiagent: session {app.runtime.core.session.id} is kept; `tuiagent --resume ")


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    from tui_agent.cli import main

    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip().startswith("tuiagent ")


def test_the_resume_picker_row_says_when_how_big_and_what(tmp_path: Path) -> None:
    import time

    from tui_agent.ui.slash_commands import session_label

    path = tmp_path / "s.jsonl"
    path.write_text("x" * 3000)
    moment = time.mktime((2026, 11, 26, 9, 5, 0, 0, 0, -1))
    label = session_label(path, moment, "claude-sonnet-4-5", "fix the\nflaky test")
    assert label.startswith("2026-11-26 09:05") and "2.9 KB" in label and "claude-sonnet-4-5" in label
    assert label.endswith("fix the flaky test")


async def test_the_header_shows_context_use_and_compact_replaces_the_conversation_with_a_summary(repo: Path, api: FakeMessagesAPI) -> None:
    # on the HTTP fake: the request after /compact must pass the real API's rules (the fake's strict validator)
    (repo / "big.txt").write_text("".join(f"line {n} " + "x" * 70 + "\n" for n in range(400)))
    api.enqueue(reply(tool_use("read_file", {"path": "big.txt"})), reply(text("read it")),
                reply(text("ok"), usage={"input_tokens": 150_000, "output_tokens": 5}),
                reply(text("big.txt has 400 numbered lines of x."), usage={"input_tokens": 151_000, "output_tokens": 12}),
                reply(text("after")))
    app = make_app(repo)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        assert "ctx" not in app.header.render().plain  # no request yet
        await send(pilot, app, "read big.txt")
        await wait_until(pilot, lambda: turn_answered(app, "read it"), timeout=60, message="the first turn")
        assert 0 <= app.usage.context_percent < 50 and f"ctx {app.usage.context_percent}%" in app.header.render().plain
        await send(pilot, app, "and?")
        await wait_until(pilot, lambda: turn_answered(app, "ok"), timeout=60, message="the big request")
        assert app.usage.context_percent >= 75  # 150k uncached (and the cached prefix) of the 200k limit
        await send(pilot, app, "/compact focus on big.txt")
        await wait_until(pilot, lambda: any(e.kind == "notice" and e.text.startswith("Compacted:") for e in app.conversation.entries),
                         timeout=60, message="the compaction")
        request = api.requests[3].body
        assert "tool_choice" not in request and request["tools"]
        instruction = request["messages"][-1]["content"][-1]["text"]
        assert instruction.startswith(SUMMARY_INSTRUCTION) and instruction.endswith("focus on: focus on big.txt")
        assert any(block.get("type") == "tool_result" for message in request["messages"] for block in message["content"])
        agent = agent_of(app.runtime)
        assert agent.messages == [{"role": "user", "content": [{"type": "text", "text": SUMMARY_HEADER + "big.txt has 400 numbered lines of x."}]}]
        assert app.usage.context_percent < 10 and app.usage.tokens_out == agent.usage.output_tokens
        await send(pilot, app, "go on")  # the next request is valid (the fake API enforces the API's rules)
        await wait_until(pilot, lambda: turn_answered(app, "after"), timeout=60, message="a turn after /compact")
        assert api.requests[4].body["messages"][0]["content"][0]["text"].startswith(SUMMARY_HEADER)


async def test_a_failed_or_cancelled_compact_leaves_the_conversation_and_says_so(repo: Path, scripted: ScriptedModel) -> None:
    scripted.enqueue(reply(text("hello")), ModelError(ErrorKind.CONTEXT_TOO_LONG, "the conversation is too long for the model "
                                                      "(prompt is too long: 210000 tokens > 200000 maximum)", status=400))
    scripted.hold(reply(text("too late")))  # never released: the second compaction is cancelled while it waits
    app = make_app(repo, client=scripted)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, app, "hi")
        await wait_until(pilot, lambda: turn_answered(app, "hello"), timeout=60, message="the first turn")
        agent = agent_of(app.runtime)
        before = json.loads(json.dumps(agent.messages))
        await send(pilot, app, "/compact")
        await wait_until(pilot, lambda: any(e.kind == "notice" and e.text.startswith("Could not compact:") for e in app.conversation.entries),
                         timeout=60, message="the failure")
        failure = next(e.text for e in app.conversation.entries if e.kind == "notice" and e.text.startswith("Could not compact:"))
        assert "too long" in failure and "unchanged" in failure and agent.messages == before and not app.turns.running
        await send(pilot, app, "/compact")
        await wait_until(pilot, lambda: len(scripted.requests) == 3 and app.turns.running, timeout=30, message="the second compaction running")
        assert app.busy
        await pilot.press("escape")
        await wait_until(pilot, lambda: any(e.kind == "notice" and e.text.startswith("Compaction cancelled") for e in app.conversation.entries),
                         timeout=30, message="the cancel")
        assert agent.messages == before and not app.turns.running and not app.busy


async def test_a_bang_command_runs_as_the_person_typed_it_without_approval_and_the_model_sees_it(
        repo: Path, scripted: ScriptedModel) -> None:
    scripted.enqueue(reply(text("seen it")))
    app = make_app(repo, client=scripted, sandbox_tier="bubblewrap")
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        (repo / "README.md").write_text("changed by the person\n")
        await send(pilot, app, "!git commit -qam 'by hand' && echo bang-$((40 + 2))")
        entry = next(entry for entry in app.conversation.entries if entry.kind == "tool")
        await wait_until(pilot, lambda: entry.result is not None, timeout=30, message="the command's output")
        assert not isinstance(app.screen, ApprovalScreen)
        assert "bang-42" in entry.result and "exit code: 0" in entry.result and not entry.is_error
        assert git(repo, "log", "-1", "--format=%s").strip() == "by hand"  # .git written: the person's rights, not the sandbox's
        await send(pilot, app, "!exit 3")
        failed = app.conversation.tool_entries()[-1]
        await wait_until(pilot, lambda: failed is not entry and failed.result is not None, timeout=30, message="the failure")
        assert failed.is_error and "exit code: 3" in failed.result
        await send(pilot, app, "what did I run?")
        await wait_until(pilot, lambda: turn_answered(app, "seen it"), timeout=60, message="the turn")
        assert "bang-42" in str(scripted.requests[-1].messages[-1]) and "The user ran a shell command" in str(scripted.requests[-1].messages[-1])


async def test_copy_the_last_reply_or_its_code_block(repo: Path, scripted: ScriptedModel, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TMUX", raising=False)
    answer = "Run this:\n\n```sh\npytest -q tests\n```\n\nThen look."
    scripted.enqueue(reply(text(answer)))
    app = make_app(repo, client=scripted)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, app, "/copy")
        await wait_until(pilot, lambda: any("Nothing to copy" in m for m in notifications(app)), message="nothing yet")
        await send(pilot, app, "how do I test?")
        await wait_until(pilot, lambda: turn_answered(app, answer), timeout=60, message="the reply")
        await send(pilot, app, "/copy code")
        await wait_until(pilot, lambda: app.clipboard == "pytest -q tests\n", message="the code block copied")
        await send(pilot, app, "/copy")
        await wait_until(pilot, lambda: app.clipboard == answer, message="the reply copied")
        assert not any("tmux" in message for message in notifications(app))
        monkeypatch.setenv("TMUX", "/tmp/tmux-0/default,1,0")  # where a program's OSC 52 is dropped by default: say so
        await send(pilot, app, "/copy code")
        await wait_until(pilot, lambda: any("set -g set-clipboard on" in m for m in notifications(app)), message="the tmux hint")


async def test_light_theme_and_side_pane_width(repo: Path, no_model: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))  # the preferences file: this test's own
    app = make_app(repo, trust_project=True)
    async with app.run_test(size=(160, 40)) as pilot:
        await ready(pilot)
        await send(pilot, app, "/theme light")
        await wait_until(pilot, lambda: app.theme == "textual-light", message="the light theme")
        side = app.query_one("#side")
        before = side.size.width
        await pilot.press("alt+left", "alt+left")
        await pilot.pause(0.2)
        assert side.size.width >= before + 2 * 160 * 5 // 100 - 2, (before, side.size.width)
        await pilot.press("alt+right", "alt+right", "alt+right")
        await pilot.pause(0.2)
        assert side.size.width < before
        await pilot.resize_terminal(80, 24)  # narrow: one pane at a time fills the screen, whatever the share
        await pilot.pause(0.3)
        assert app.screen.has_class("-narrow") and app.query_one("#conversation-pane").outer_size.width == 80
    await asyncio.sleep(0.2)  # the preferences are written in a thread
    assert json.loads((tmp_path / "config" / "tuiagent" / "ui.json").read_text()) == {"theme": "light", "side_share": 35}
    app = make_app(repo, trust_project=True)  # the next run starts with them
    async with app.run_test(size=(160, 40)) as pilot:
        await ready(pilot)
        await pilot.pause(0.2)
        assert app.theme == "textual-light" and app.side_share == 35
        assert app.query_one("#side").outer_size.width == 160 * 35 // 100


async def test_redo_takes_back_an_undo_files_and_tools_and_undo_works_again(repo: Path, scripted: ScriptedModel) -> None:
    scripted.enqueue(reply(tool_use("write_file", {"path": "README.md", "content": "agent readme\n"}),
                      tool_use("create_tool", {"name": "double", "source": tool_source("double")})), reply(text("done")))
    (repo / ".agent").mkdir()
    (repo / ".agent" / "config.toml").write_text('[permissions]\nallow = ["write_file"]\n')
    app = make_app(repo, client=scripted, sandbox_tier="rlimits")
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, app, "/redo")
        await wait_until(pilot, lambda: any(e.kind == "notice" and e.text.startswith("Nothing to redo") for e in app.conversation.entries),
                         message="nothing to redo yet")
        await send(pilot, app, "readme and a tool")
        await wait_until(pilot, lambda: turn_answered(app, "done"), timeout=60, message="the turn")
        await wait_until(pilot, lambda: row_names(app) == ["double"], message="the tool")
        await send(pilot, app, "/undo")
        await answer_confirm(pilot)
        await wait_until(pilot, lambda: (repo / "README.md").read_text() == "# demo project\n" and row_names(app) == [], timeout=30,
                         message="the undo")
        user = next(entry for entry in app.conversation.entries if entry.kind == "user")
        await wait_until(pilot, lambda: user.undone, message="marked undone")
        (repo / "notes.txt").write_text("mine\n")  # an unrelated edit of the person's: redo leaves it alone
        await send(pilot, app, "/redo")
        await answer_confirm(pilot)
        await wait_until(pilot, lambda: (repo / "README.md").read_text() == "agent readme\n", timeout=30, message="the redo")
        await wait_until(pilot, lambda: row_names(app) == ["double"], timeout=30, message="the tool restored")
        assert (repo / "notes.txt").read_text() == "mine\n"
        await wait_until(pilot, lambda: not user.undone, message="the mark gone")
        assert not app.runtime.core.undo.turns(app.runtime.core.session)[-1].undone
        await send(pilot, app, "/undo")  # the journal knows the turn is back: undo takes it back again
        await answer_confirm(pilot)
        await wait_until(pilot, lambda: (repo / "README.md").read_text() == "# demo project\n", timeout=30, message="undo again")


async def test_a_running_shell_command_shows_its_elapsed_time(repo: Path, scripted: ScriptedModel) -> None:
    scripted.enqueue(reply(tool_use("run_shell", {"command": "sleep 3; echo slept"})), reply(text("done")))
    (repo / ".agent").mkdir()
    (repo / ".agent" / "config.toml").write_text('[permissions]\nallow = ["run_shell"]\n')
    app = make_app(repo, client=scripted, sandbox_tier="rlimits")
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, app, "sleep")
        await wait_until(pilot, lambda: any(isinstance(w, ToolCallBlock) for w in app.conversation.children), timeout=30, message="the block")
        block = next(w for w in app.conversation.children if isinstance(w, ToolCallBlock))
        await wait_until(pilot, lambda: "running · 2." in block.title, timeout=30, message="the timer at 2 s")
        await wait_until(pilot, lambda: turn_answered(app, "done"), timeout=60, message="the turn")
        assert "running" not in block.title and " ok · " in block.title


async def test_a_call_waiting_for_approval_says_so_and_its_time_leaves_the_wait_out(repo: Path, scripted: ScriptedModel) -> None:
    scripted.enqueue(reply(tool_use("run_shell", {"command": "echo quick"})), reply(text("done")))
    app = make_app(repo, client=scripted, sandbox_tier="rlimits")
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, app, "run it")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), timeout=30, message="the approval")
        block = next(w for w in app.screen_stack[0].query(ToolCallBlock))
        await asyncio.sleep(1.6)  # the person reads the command; a timer counting this would say "running · 1.6 s"
        block.refresh_entry()
        assert "waiting for your approval" in block.title and "running" not in block.title, block.title
        await pilot.press("y")
        await wait_until(pilot, lambda: turn_answered(app, "done"), timeout=60, message="the turn")
        entry = app.conversation.tool_entries()[-1]
        assert entry.duration_ms is not None and entry.duration_ms < 1500, entry.duration_ms  # the run, not the wait
        assert " ok · " in block.title and not entry.awaiting_approval


def test_retries_of_one_failure_fold_into_one_notice() -> None:
    from tui_agent.core.events import Notice
    from tui_agent.ui.transcript import transcript_of

    failure = "could not connect to http://127.0.0.1:9/v1\n(connection refused): is the server running?"
    events = [Notice(f"{failure} — retrying ({n}/3) in {0.5 * 2 ** n:.1f}s", "warning") for n in (1, 2, 3)]
    events.append(Notice("something else — retrying (1/3) in 0.5s", "warning"))
    entries = transcript_of(events).entries
    assert [entry.text for entry in entries] == [f"{failure} — retrying (3/3) in 4.0s", "something else — retrying (1/3) in 0.5s"]


async def test_an_unreachable_server_says_its_failure_once_retries_and_end_in_one_notice(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", f"http://127.0.0.1:{port}")
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    app = make_app(repo)
    app.options = replace(app.options, extra={**app.options.extra, "retry_base_delay_s": 0.01})  # the retries, not their 1 s backoff
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, app, "hello")
        await wait_until(pilot, lambda: turn_failed_shown(app) or any("after 2 retries" in e.text for e in app.conversation.entries),
                         timeout=60, message="the failure")
        await pilot.pause(0.2)
        notices = [entry for entry in app.conversation.entries if entry.kind == "notice"]
        mentions = [entry for entry in notices if "cannot reach the model server" in entry.text]
        assert len(mentions) == 1, [entry.text for entry in notices]
        failure = mentions[0]
        assert failure.level == "error" and failure.text.startswith("turn failed (connection) after 2 retries: cannot reach")
        assert failure.text.endswith("server.") and ".." not in failure.text and "not kept" not in failure.text
        assert app.prompt_area.text == "hello"


async def test_every_new_feature_is_in_the_palette_and_in_help(repo: Path, no_model: None) -> None:
    from tui_agent.ui.palette import palette_commands

    app = make_app(repo)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        titles = {command.title for command in palette_commands(app, app.prompt_area, app.catalog_pane, app.diff_pane)}
        for title in ("/compact", "/copy", "/theme", "/redo", "!command", "Copy the last code block", "Edit the prompt in $EDITOR",
                      "Side panes: wider", "Side panes: narrower", "Permission mode: next"):
            assert title in titles, title
        await send(pilot, app, "/help")
        await wait_until(pilot, lambda: any(e.kind == "notice" and e.text.startswith("Commands:") for e in app.conversation.entries),
                         message="the help")
        shown = next(e.text for e in app.conversation.entries if e.kind == "notice" and e.text.startswith("Commands:"))
        for words in ("/compact", "/copy", "/theme", "/redo", "!command", "shift+tab permission mode", "ctrl+g the prompt in $EDITOR",
                      "alt+←/alt+→ side panes", "ctrl+c copy / stop / clear / twice quits", "No model is configured"):
            assert words in shown, words


async def test_tab_goes_to_the_queued_prompts_while_there_are_some(repo: Path, scripted: ScriptedModel) -> None:
    first_done = scripted.hold(reply(text("slow answer")))
    scripted.enqueue(reply(text("second")))
    app = make_app(repo, client=scripted)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, app, "first")
        await wait_until(pilot, lambda: app.turns.running, message="the turn")
        await send(pilot, app, "queued one")
        await wait_until(pilot, lambda: len(app.turns.queue) == 1, message="the queued prompt")
        await pilot.press("tab")
        await pilot.pause()
        assert app.focused is not None and app.focused.id == "prompt-queue"
        first_done.set()
        await wait_until(pilot, lambda: turn_answered(app, "second"), timeout=60, message="both turns")
