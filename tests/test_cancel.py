"""Cancelling a turn (Esc in the TUI, a cancelled task, SIGINT/SIGTERM/SIGHUP headless) ends every process it started within a second, and the model is told which calls finished."""

from __future__ import annotations

import asyncio
import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.agent_helpers import agent_runtime, of_type
from tests.fake_messages_api import FakeMessagesAPI, reply, text, tool_use
from tui_agent.core.agent.loop import CANCELLED_RESULT
from tui_agent.core.agent.sessions import INTERRUPTED_RESULT, load_messages
from tui_agent.core.events import ToolCallStarted
from tui_agent.core.runtime_state import agent_of

TIERS = ["bubblewrap", "rlimits"]


PROBE_S = 60  # the probe's natural life: far past every wait below, so a probe gone before it was stopped, not finished
STOPPED_WITHIN_S = 30  # where a test's subject is that the processes stop at all, not how fast: a bound load cannot reach


def new_probe_tag() -> str:
    """A probe's mark: the seconds its `sleep` waits, made unique by their fraction (so `sleep`'s command line has it)."""
    return f"{PROBE_S}.{secrets.randbelow(10**9):09d}"


def probe_command(tag: str) -> str:
    """The probe: its shell and its `sleep` both have `tag` in their command lines, so `processes_with(tag)` sees either
    one outliving a cancel; a shell outliving its `sleep` writes PROBE.txt at once."""
    return f"sleep {tag}; echo ran > PROBE.txt"


def assert_stopped_not_finished(repo: Path, tag: str) -> None:
    """After a wait (always far shorter than PROBE_S) for every process of a probe to be gone: they were stopped, not
    finished, and none of it ran on (no PROBE.txt, which its shell writes the moment its `sleep` ends, killed or not)."""
    assert not (repo / "PROBE.txt").exists() and not processes_with(tag)


def processes_with(tag: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            try:
                if tag.encode() in Path(f"/proc/{entry}/cmdline").read_bytes():
                    found.append(int(entry))
            except OSError:
                pass
    return found


async def wait_for(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.05)


@pytest.mark.parametrize("tier", TIERS)
async def test_cancelling_an_approved_run_shell_kills_it_within_a_second(repo: Path, tier: str) -> None:
    tag = new_probe_tag()
    with FakeMessagesAPI() as api:
        api.enqueue(reply(tool_use("read_file", {"path": "README.md"}), tool_use("run_shell", {"command": probe_command(tag)})))
        api.enqueue(reply(text("ok")))
        async with agent_runtime(repo, api, sandbox_tier=tier) as runtime:
            agent = agent_of(runtime)
            assert agent is not None
            seen: list[object] = []

            async def consume() -> None:
                async for event in agent.run_turn("probe"):
                    seen.append(event)

            task = asyncio.create_task(consume())
            await wait_for(lambda: processes_with(tag), 20, "the shell command to start")
            cancelled_at = time.monotonic()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            await wait_for(lambda: not processes_with(tag), 1.0, "every process of the turn to end")
            assert time.monotonic() - cancelled_at < 1.5
            results = [block["content"] for block in agent.messages[-1]["content"]]
            assert "demo project" in results[0] and results[1] == CANCELLED_RESULT  # which call finished is kept
            assert len(of_type(seen, ToolCallStarted)) == 2
    assert_stopped_not_finished(repo, tag)


def start_headless(repo: Path, api: FakeMessagesAPI, *extra: str) -> subprocess.Popen:
    env = {**os.environ, "ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": api.base_url}
    return subprocess.Popen([sys.executable, "-m", "tui_agent.cli", "--project", str(repo), "-p", "probe", "--yes", *extra],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=["SIGINT", "SIGTERM", "SIGHUP"])
async def test_a_signal_to_a_headless_run_ends_its_processes_and_records_which_calls_finished(repo: Path, signum: int) -> None:
    tag = new_probe_tag()
    with FakeMessagesAPI() as api:
        api.enqueue(reply(tool_use("read_file", {"path": "README.md"}), tool_use("run_shell", {"command": probe_command(tag)})))
        process = start_headless(repo, api)
        try:
            await wait_for(lambda: processes_with(tag), 60, "the shell command to start")
            process.send_signal(signum)
            # the guarantee is that they stop (long before the probe could end on its own), not a wall-clock bound that a
            # loaded 2-core machine can break: the run's shutdown waits for a core
            await wait_for(lambda: not processes_with(tag), STOPPED_WITHIN_S, "every process of the turn to end")
            await wait_for(lambda: process.poll() is not None, 30, "the headless run to exit")
        finally:
            if process.poll() is None:
                process.kill()
            process.communicate()
    assert process.returncode == 130
    assert_stopped_not_finished(repo, tag)
    session = next((repo / ".agent" / "sessions").glob("*.jsonl"))
    results = [block["content"] for block in load_messages(session)[-1]["content"]]
    assert "demo project" in results[0] and results[1] == CANCELLED_RESULT


async def test_a_resumed_session_reports_a_finished_call_with_its_result_after_a_hard_kill(repo: Path) -> None:
    tag = new_probe_tag()
    with FakeMessagesAPI() as api:
        api.enqueue(reply(tool_use("read_file", {"path": "README.md"}), tool_use("run_shell", {"command": probe_command(tag)})))
        process = start_headless(repo, api, "--sandbox-tier", "bubblewrap")
        try:
            await wait_for(lambda: processes_with(tag), 60, "the shell command to start")
            process.kill()  # no chance to close the transcript
            process.communicate()
            await wait_for(lambda: not processes_with(tag), STOPPED_WITHIN_S, "the sandbox to die with its parent")
        finally:
            if process.poll() is None:
                process.kill()
    session = next((repo / ".agent" / "sessions").glob("*.jsonl"))
    results = [block["content"] for block in load_messages(session)[-1]["content"]]
    assert "demo project" in results[0], results  # it finished: not reported as interrupted
    assert results[1] == INTERRUPTED_RESULT


async def test_escape_in_the_tui_ends_an_approved_run_shell_within_a_second(repo: Path, api: FakeMessagesAPI) -> None:
    from tests.ui_support import SIZE, make_app, ready, wait_until as ui_wait_until
    from tui_agent.ui.screens.approval import ApprovalScreen

    tag = new_probe_tag()
    api.enqueue(reply(tool_use("run_shell", {"command": probe_command(tag)})), reply(text("Stopped.")))
    app = make_app(repo)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        app.prompt_area.focus()
        app.prompt_area.insert("probe")
        await pilot.press("enter")
        await ui_wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), timeout=20, message="the approval")
        await pilot.press("y")
        await ui_wait_until(pilot, lambda: bool(processes_with(tag)), timeout=20, message="the shell command")
        await pilot.press("escape")
        pressed = time.monotonic()
        await ui_wait_until(pilot, lambda: not processes_with(tag), timeout=1.0, message="every process of the turn to end")
        assert time.monotonic() - pressed < 1.5
        await ui_wait_until(pilot, lambda: not app.turns.running, timeout=10, message="the cancel")
    assert_stopped_not_finished(repo, tag)


async def test_sigterm_during_a_recipe_run_ends_its_processes(repo: Path) -> None:
    tag = new_probe_tag()
    recipes = repo / ".agent" / "recipes"
    recipes.mkdir(parents=True)
    (recipes / "probe.toml").write_text('description = "probe"\n\n[trigger]\non = "command"\n\n[action]\nprompt = "probe"\n')
    with FakeMessagesAPI() as api:
        api.enqueue(reply(tool_use("run_shell", {"command": probe_command(tag)})))
        env = {**os.environ, "ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": api.base_url}
        process = subprocess.Popen([sys.executable, "-m", "tui_agent.cli", "--project", str(repo), "--yes", "recipes", "run", "probe"],
                                   env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            await wait_for(lambda: processes_with(tag), 60, "the recipe's shell command to start")
            process.send_signal(signal.SIGTERM)
            await wait_for(lambda: not processes_with(tag), STOPPED_WITHIN_S, "every process of the recipe to end")
            await wait_for(lambda: process.poll() is not None, 30, "the recipe run to exit")
        finally:
            if process.poll() is None:
                process.kill()
            process.communicate()
    assert process.returncode == 130
    assert_stopped_not_finished(repo, tag)
