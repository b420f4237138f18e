"""Two keys as Claude Code has them: ctrl+c (copy, stop, clear, twice quits) and shift+tab (the permission mode)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from textual.widgets import Input, TextArea

from tui_agent.ui.host import PromptBox, UIHost

if TYPE_CHECKING:
    from textual.screen import Screen
    from textual.widget import Widget

    from tui_agent.ui.turn import TurnRunner

QUIT_AGAIN_S = 2.0
PERMISSION_MODE_CYCLE = ("ask", "auto", "read-only", "plan")
PERMISSION_MODE_HELP = {
    "ask": "Shell commands, edits and tools that write ask first (allow rules still apply).",
    "auto": "Edits to project files are approved without asking; shell commands and network still ask.",
    "read-only": "Nothing that writes or runs a shell command is allowed; the agent is told it was refused.",
    "plan": "Read-only while the agent investigates and proposes a plan; approving it switches back to ask.",
}


class KeyHost(UIHost, Protocol):
    """The app's side of ctrl+c: when it last asked "again to quit", and quitting."""

    interrupted_at: float

    def exit(self, result: int | None = None, return_code: int = 0, message: str | None = None) -> None: ...


def copy_selection(screen: Screen[Any], focused: Widget | None, to_clipboard: Callable[[str], None]) -> bool:
    """ctrl+c first copies what is selected: the focused text field's selection, else text selected with the mouse on
    `screen` (the conversation, a modal's detail); False when nothing is."""
    if isinstance(focused, (TextArea, Input)) and focused.selected_text:
        focused.action_copy()
        return True
    selected = screen.get_selected_text()
    if not selected:
        return False
    to_clipboard(selected)
    screen.clear_selection()
    screen.notify(f"Copied {len(selected)} characters.", timeout=3)
    return True


def interrupt(app: KeyHost, turns: TurnRunner, prompt: PromptBox) -> None:
    """ctrl+c with nothing selected (`copy_selection` first): stop the turn, else clear the prompt (↑ brings it back),
    else press twice to quit."""
    now, armed = time.monotonic(), app.interrupted_at
    app.interrupted_at = -QUIT_AGAIN_S  # only a press right after the "again" notice quits
    if turns.running:
        turns.cancel()
    elif prompt.text.strip():
        prompt.prompt_history.add(prompt.full_text)
        prompt.set_text("")
    elif now - armed < QUIT_AGAIN_S:
        app.exit(0)
    else:
        app.notify("Press ctrl+c again to quit (ctrl+q quits at once).", timeout=QUIT_AGAIN_S)
        app.interrupted_at = now


def cycle_permission_mode(app: UIHost) -> None:
    """shift+tab: ask → auto → read-only → plan → ask, for the next tool calls of this session (the header shows it)."""
    if app.runtime is None:
        app.notify("The project is still opening.", severity="warning")
        return
    permissions = app.runtime.core.permissions
    modes = PERMISSION_MODE_CYCLE
    mode = modes[(modes.index(permissions.mode) + 1) % len(modes)] if permissions.mode in modes else modes[0]
    permissions.set_mode(mode)
    app.permission_mode = mode
    app.notify(f"Permission mode: {mode}. {PERMISSION_MODE_HELP[mode]}", timeout=6)
