"""Helpers for the UI tests (no tests here): the app built like the CLI builds it, tool sources, waiting on state."""

from __future__ import annotations

import argparse
import asyncio
import re
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual import events
from textual.pilot import Pilot

from tui_agent.ui.app import TuiAgentApp
from tui_agent.ui.launch import build_app
from tui_agent.ui.widgets.messages import Entry
from tui_agent.core.runtime_state import catalog_of

SIZE = (160, 48)


def tool_source(name: str, body: str = "return 2 * x", *, extra: str = "", summary: str = "Double a number.") -> str:
    return textwrap.dedent(extra) + textwrap.dedent(
        f'''
        def {name}(x: int) -> int:
            """{summary}

            Args:
                x: the number
            """
            {body}
        '''
    )


def make_app(project: Path, **flags: Any) -> TuiAgentApp:
    """The app through the CLI's factory (`tuiagent` without -p), with test-friendly overrides; `client=scripted` (the
    fixture, tests/scripted_model.py) plays the model in-process, else the SDK talks to whatever `ANTHROPIC_*` names."""
    args = argparse.Namespace(project=str(project), model=flags.pop("model", None), resume=flags.pop("resume", None), continue_latest=False,
                              permission_mode=None, sandbox_tier=flags.pop("sandbox_tier", None), allow=[], yes=False, init_git=flags.pop("init_git", False),
                              trust_project=flags.pop("trust_project", False), thinking=flags.pop("thinking", None),
                              effort=flags.pop("effort", None))
    return build_app(args, **flags)


async def wait_until(pilot: Pilot, predicate: Callable[[], bool], timeout: float = 10.0, message: str = "condition") -> None:
    """Let the app run until `predicate()` holds; fail with `message` after `timeout` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {message}")
        await pilot.pause(0.05)


async def send(pilot: Pilot, app: TuiAgentApp, prompt: str) -> None:
    """Type `prompt` into the prompt box and press enter, as a person sends it."""
    app.prompt_area.focus()
    app.prompt_area.insert(prompt)
    await pilot.press("enter")


async def approved_bang(pilot: Pilot, app: TuiAgentApp, command: str) -> Entry:
    """Send `!command` (the person's own: it runs without an approval) and return its tool entry once shown."""
    before = len(app.conversation.tool_entries())
    await send(pilot, app, f"!{command}")
    await wait_until(pilot, lambda: len(app.conversation.tool_entries()) > before, timeout=30, message="the command's block")
    return app.conversation.tool_entries()[-1]


async def ready(pilot: Pilot) -> TuiAgentApp:
    app = pilot.app
    assert isinstance(app, TuiAgentApp)
    await asyncio.wait_for(app.ready.wait(), 30)
    assert app.runtime is not None and catalog_of(app.runtime) is not None, app.lifecycle.error
    await pilot.pause()
    return app


def row_names(app: TuiAgentApp) -> list[str]:
    return [row.name for row in app.catalog_pane.shown]


def notifications(app: TuiAgentApp) -> list[str]:
    return [notification.message for notification in app._notifications]


def turn_answered(app: TuiAgentApp, answer: str, times: int = 1) -> bool:
    """The turn is over and the conversation shows `answer` as the assistant's reply (`times` times so far)."""
    shown = sum(1 for entry in app.conversation.entries if entry.kind == "assistant" and entry.text == answer)
    return not app.turns.running and shown == times


def turn_failed_shown(app: TuiAgentApp) -> bool:
    """The turn is over and the conversation says it failed."""
    return not app.turns.running and any(entry.kind == "notice" and entry.text.startswith("turn failed (") for entry in app.conversation.entries)


def authored_announcements(app: TuiAgentApp) -> list[str]:
    """The toasts that announced a tool or recipe the agent created or updated (one per ToolAuthored)."""
    return [message for message in notifications(app) if re.match(r"(tool|recipe) \S+ (created|updated) · ", message)]


async def answer_confirm(pilot: Pilot, key: str = "y", timeout: float = 30.0) -> None:
    """Wait for the confirmation modal (every destructive action asks) and answer it with `key`."""
    from tui_agent.ui.screens.confirm import ConfirmScreen

    await wait_until(pilot, lambda: isinstance(pilot.app.screen, ConfirmScreen), timeout=timeout, message="the confirmation")
    await pilot.press(key)
    await wait_until(pilot, lambda: not isinstance(pilot.app.screen, ConfirmScreen), timeout=timeout, message="the confirmation to close")


def burst(app: TuiAgentApp, *keys: str) -> None:
    """Keys arriving together, as from a fast typist or a terminal's buffer (the pilot's `press` waits after each)."""
    assert app._driver is not None
    for key in keys:
        event = events.Key(key, key if len(key) == 1 else None)
        event.set_sender(app)
        app._driver.send_message(event)
