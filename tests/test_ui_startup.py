"""Startup: the screen is up before the runtime opens, says what is loading, and a prompt typed meanwhile is sent once ready."""

from __future__ import annotations

import asyncio
import gc
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.scripted_model import ScriptedModel
from tests.fake_messages_api import FakeMessagesAPI, reply, text, tool_use
from tests.ui_support import SIZE, make_app, turn_answered, wait_until
from tui_agent.ui.screens.git_question import GitQuestionScreen
from tui_agent.ui.prompt_queue import PromptQueue
from tui_agent.ui.runtime_bridge import LaunchOptions, UICallbacks, open_runtime_for_ui
from tui_agent.core.runtime_state import catalog_of


class GatedOpener:
    """The real runtime opener, held back until the test opens the gate (a project that takes long to open)."""

    def __init__(self) -> None:
        self.gate = asyncio.Event()
        self.started = asyncio.Event()
        self.progress_seen: list[tuple[str, ...]] = []

    async def __call__(self, root: Path, callbacks: UICallbacks, options: LaunchOptions) -> Any:
        self.started.set()
        await self.gate.wait()
        report = callbacks.progress

        def record(pending: tuple[str, ...]) -> None:
            self.progress_seen.append(pending)
            if report is not None:
                report(pending)

        gated = UICallbacks(approve=callbacks.approve, ask_init_git=callbacks.ask_init_git,
                            submit_prompt=callbacks.submit_prompt, progress=record)
        return await open_runtime_for_ui(root, gated, options)


async def type_prompt(pilot, app, prompt: str) -> None:  # type: ignore[no-untyped-def]
    app.prompt_area.focus()
    app.prompt_area.insert(prompt)
    await pilot.press("enter")


async def test_a_prompt_typed_while_the_project_opens_is_sent_once_the_model_is_ready(repo: Path, api: FakeMessagesAPI) -> None:
    api.enqueue(reply(text("Hello from the model.")))
    opener = GatedOpener()
    app = make_app(repo, runtime_opener=opener)
    async with app.run_test(size=SIZE) as pilot:
        await asyncio.wait_for(opener.started.wait(), 10)
        assert app.runtime is None and "the project" in app.header.still_loading  # the screen says it is still loading
        assert app.header.loading is False  # in the header's own text, not hidden under Textual's loading indicator
        await type_prompt(pilot, app, "first question")
        await type_prompt(pilot, app, "second question")
        await pilot.pause()
        assert [item.text for item in app.turns.queue] == ["first question", "second question"]
        assert api.requests == []
        opener.gate.set()
        await wait_until(pilot, lambda: len(api.requests) == 2, timeout=30, message="both queued prompts sent")
        sent = [request.body["messages"][-1]["content"] for request in api.requests]
        assert "first question" in str(sent[0]) and "second question" in str(sent[1])
        await wait_until(pilot, lambda: not app.turns.running and not app.turns.queue, timeout=30, message="the turns")
        assert app.header.still_loading == ""
        users = [entry.text for entry in app.conversation.entries if entry.kind == "user"]
        assert users == ["first question", "second question"]
    # the header named what was still loading, and ended with nothing pending
    assert any("model client" in pending for pending in opener.progress_seen)
    assert opener.progress_seen[-1] == ()


async def test_without_a_model_a_queued_prompt_goes_back_into_the_prompt_box(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    opener = GatedOpener()
    app = make_app(repo, runtime_opener=opener)
    async with app.run_test(size=SIZE) as pilot:
        await asyncio.wait_for(opener.started.wait(), 10)
        await type_prompt(pilot, app, "explain the build")
        await pilot.pause()
        assert app.prompt_area.text == ""
        opener.gate.set()
        await wait_until(pilot, lambda: app.ready.is_set(), timeout=30, message="the runtime")
        await wait_until(pilot, lambda: app.prompt_area.text == "explain the build", message="the prompt handed back")
        assert not app.turns.queue
        notices = [entry.text for entry in app.conversation.entries if entry.kind == "notice"]
        assert any("back in the prompt box" in notice for notice in notices)


async def test_continuing_without_git_writes_nothing_to_the_folder(tmp_path: Path, scripted: ScriptedModel,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state-elsewhere"))
    folder = tmp_path / "plain"
    folder.mkdir()
    (folder / "notes.txt").write_text("remember the milk\n")
    scripted.enqueue(reply(tool_use("read_file", {"path": "notes.txt"}), tool_use("run_shell", {"command": "cat notes.txt"})),
                     reply(text("It says: remember the milk.")))
    app = make_app(folder, client=scripted)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, GitQuestionScreen), timeout=20, message="the git question")
        assert "nothing is written here" in str(app.screen.question)  # type: ignore[attr-defined]
        assert f"kept in {tmp_path / 'state-elsewhere' / 'tuiagent'})" in str(app.screen.question)  # type: ignore[attr-defined]
        await pilot.press("c")
        await wait_until(pilot, lambda: app.ready.is_set(), timeout=30, message="the runtime")
        runtime = app.runtime
        assert runtime is not None and catalog_of(runtime) is None and runtime.core.project.outside_git
        notices = [entry.text for entry in app.conversation.entries if entry.kind == "notice"]
        assert any("used without git" in notice for notice in notices), notices  # why there are no tools
        await type_prompt(pilot, app, "what does notes.txt say?")
        await wait_until(pilot, lambda: len(app.screen_stack) > 1, timeout=30, message="the run_shell approval")
        await pilot.press("y")
        await wait_until(pilot, lambda: turn_answered(app, "It says: remember the milk."), timeout=30, message="the answer")
        read, shell = scripted.requests[1].tool_results()
        assert "remember the milk" in read["content"] and "remember the milk" in shell["content"]
        assert os.listdir(folder) == ["notes.txt"]
        assert any(runtime.core.project.sessions_dir.iterdir())  # the session is kept, outside the folder
        assert runtime.core.project.sessions_dir.is_relative_to(tmp_path / "state-elsewhere" / "tuiagent")  # where the question said
    assert os.listdir(folder) == ["notes.txt"]


def test_prompt_queue_keeps_order_and_tells_listeners() -> None:
    queue = PromptQueue()
    changes: list[int] = []
    queue.add_listener(lambda: changes.append(len(queue)))
    queue.push("a")
    queue.push("b", "recipe")
    first = queue.pop()
    assert first is not None and first.text == "a"
    queue.push_front(first)
    assert [(item.text, item.source) for item in queue] == [("a", "person"), ("b", "recipe")]
    assert queue.remove(1).text == "b"
    assert [item.text for item in queue.clear()] == ["a"]
    assert queue.pop() is None and not queue
    assert changes == [1, 2, 1, 2, 1, 0]


async def test_the_first_frame_has_its_layout_classes_and_the_collector_runs_again_after_it(repo: Path) -> None:
    """`tuiagent` starts with the garbage collector off (cli.entry); the app turns it on once the project has opened
    (and a prompt typed meanwhile reached the model), not while the opening builds what lives on.
    The main screen is born with its pane and breakpoint classes (adding them after mounting restyled every widget)."""
    opener = GatedOpener()
    app = make_app(repo, runtime_opener=opener)
    gc.disable()
    try:
        async with app.run_test(size=SIZE) as pilot:
            await asyncio.wait_for(opener.started.wait(), 10)
            assert not gc.isenabled()
            assert app.screen.has_class("-show-conversation") and app.screen.has_class("-wide" if SIZE[0] >= 120 else "-narrow")
            assert app.conversation.welcome.display
            opener.gate.set()
            await asyncio.wait_for(app.ready.wait(), 10)
            while not gc.isenabled():
                await pilot.pause(0.01)
    finally:
        gc.enable()


@pytest.mark.parametrize("command", [["tools", "list"], ["--undo"]])
def test_a_command_other_than_the_tui_turns_the_collector_on_at_once(repo: Path, command: list[str]) -> None:
    """Every other command runs with the collector on (`tuiagent tools list`, `tuiagent --undo`: no screen), through the
    console script's entry."""
    result = subprocess.run([sys.executable, "-c", (
        "import gc, sys, tui_agent.cli as cli\n"
        "states = []\n"
        "real_dispatch = cli.dispatch\n"
        "def dispatch(arguments, as_json):\n"
        "    states.append(gc.isenabled())\n"
        "    code = real_dispatch(arguments, as_json)\n"
        "    states.append(gc.isenabled())\n"
        "    return code\n"
        "cli.dispatch = dispatch\n"
        "sys.argv = ['tuiagent', '--project', *sys.argv[1:]]\n"
        "import atexit; atexit.register(lambda: print(states, flush=True))\n"
        "cli.entry()\n"), str(repo), *command], capture_output=True, text=True, timeout=120)
    assert result.stdout.strip().splitlines()[-1] == "[False, True]"


async def test_what_mounts_after_the_first_frame_arrives_in_place(repo: Path) -> None:
    """The catalog's table and filter and the diff body mount just after the first frame, the footer once the project
    has opened (its keys would share the interpreter with a prompt typed meanwhile): they come, the footer where its
    row was kept, and the table with columns fitted to its width."""
    import io

    from rich.console import Console
    from textual.widgets import Footer

    opener = GatedOpener()
    app = make_app(repo, runtime_opener=opener)
    async with app.run_test(size=SIZE) as pilot:
        await asyncio.wait_for(opener.started.wait(), 10)
        await pilot.pause()
        assert not app.screen.query(Footer) and app.screen.query("#footer-slot")
        table = app.catalog_pane.table
        assert table.is_mounted and app.catalog_pane.filter_box.is_mounted and app.diff_pane.body.is_mounted
        assert table.columns and sum(column.width for column in table.columns.values()) <= table.scrollable_content_region.width
        app.diff_pane.show("a diff", "--- a\n+++ b\n@@ -1 +1 @@\n-old\n+new\n")
        await pilot.pause()
        console = Console(width=60, record=True, file=io.StringIO())
        console.print(app.diff_pane.body.content)
        assert "+new" in console.export_text().replace(" ", "")
        opener.gate.set()
        await wait_until(pilot, lambda: bool(app.screen.query(Footer)), message="the footer")
        await pilot.pause()
        footer = app.screen.query_one(Footer)
        assert footer.region.y == SIZE[1] - 1 and not app.screen.query("#footer-slot")
