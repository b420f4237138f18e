"""Small everyday actions: copy the last reply or code block, the light/dark theme, side pane width, the prompt in $EDITOR."""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import subprocess
import tempfile
from contextlib import AbstractContextManager
from pathlib import Path
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from textual.app import SuspendNotSupported

from tui_agent.ui.host import ConversationView, PromptBox, UIHost
from tui_agent.ui.preferences import load_preferences, save_preferences

if TYPE_CHECKING:
    from textual.geometry import Size

    from tui_agent.ui.command_registry import CommandRegistry

CODE_BLOCK = re.compile(r"^```[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
THEMES = {"dark": "textual-dark", "light": "textual-light"}
SIDE_SHARES = (25, 30, 35, 40, 45, 50, 55, 60, 65, 70)
"""The side panes' share of the width (percent) in the wide layout; 40 by default (the conversation gets the rest)."""
DEFAULT_SIDE_SHARE = 40
WIDE_FROM = 120  # the app's breakpoint (app.NARROW_WIDTH): panes side by side from this width


class ShellHost(UIHost, Protocol):
    """The app as a terminal program: its theme, size, side panes' share, the clipboard, suspending for an editor."""

    theme: str
    side_share: int

    @property
    def size(self) -> Size: ...

    def size_panes(self, side_share: int | None) -> None:
        """The side panes' share of the width in percent (None: the layout's own widths)."""
        ...

    def copy_to_clipboard(self, text: str) -> None: ...

    def suspend(self) -> AbstractContextManager[None]: ...

    def call_after_refresh(self, callback: Callable[..., Any], *args: Any, **kwargs: Any) -> bool: ...


def register_everyday_commands(app: ShellHost, registry: CommandRegistry, view: Callable[[], ConversationView]) -> None:
    """`/copy [code]` (from the conversation `view` shows) and `/theme light|dark`."""

    async def copy(args: str) -> None:
        copy_last(app, view(), "code" if args.strip() == "code" else "reply")

    async def theme(args: str) -> None:
        name = args.strip() or ("light" if app.theme == THEMES["dark"] else "dark")
        if name not in THEMES:
            await app.add_notice("Usage: /theme light | /theme dark", "warning")
            return
        set_theme(app, name)

    registry.add("copy", copy)
    registry.add("theme", theme)


def last_reply(conversation: ConversationView) -> str:
    """The newest assistant reply, whole (a long reply is kept in several entries)."""
    entries = conversation.entries
    end = next((index for index in range(len(entries) - 1, -1, -1) if entries[index].kind == "assistant"), None)
    if end is None:
        return ""
    start = end
    while start > 0 and entries[start].continued and entries[start - 1].kind == "assistant":
        start -= 1
    return "".join(entry.text for entry in entries[start : end + 1])


def last_code_block(text: str) -> str:
    """The last fenced code block of a Markdown text, without its fences ("" when there is none)."""
    blocks = CODE_BLOCK.findall(text)
    return blocks[-1] if blocks else ""


def copy_last(app: ShellHost, conversation: ConversationView, what: str) -> None:
    """Copy the last reply (`reply`) or its last code block (`code`) to the terminal's clipboard (OSC 52)."""
    reply = last_reply(conversation)
    text = last_code_block(reply) if what == "code" else reply
    if not text:
        app.notify("Nothing to copy: " + ("the last reply has no code block." if what == "code" and reply else "no reply yet."),
                   severity="warning")
        return
    app.copy_to_clipboard(text)
    lines = text.count("\n") + (not text.endswith("\n"))
    # tmux drops a program's OSC 52 unless told otherwise (its default `set-clipboard external`): say so there
    inside_tmux = " (inside tmux this needs `set -g set-clipboard on`)" if os.environ.get("TMUX") else ""
    app.notify(f"Copied the last {'code block' if what == 'code' else 'reply'} ({lines} line(s)) to the clipboard{inside_tmux}.")


def set_theme(app: ShellHost, name: str) -> None:
    """`light` or `dark` (the messages, diffs and tables follow the theme's colours), remembered for the next runs."""
    app.theme = THEMES[name]
    remember(app, theme=name)
    app.notify(f"Theme: {name}, remembered (/theme light|dark; ctrl+p → Theme lists every Textual theme).")


def remember(app: ShellHost, *, theme: str | None = None) -> None:
    """Save the theme and the side panes' width for the next runs (in a thread: never on the frame's path)."""
    current = load_preferences()
    current.theme = theme or current.theme
    current.side_share = app.side_share
    app.run_worker(asyncio.to_thread(save_preferences, current), group="preferences")


def apply_preferences(app: ShellHost) -> None:
    """The saved theme and side width, at start-up (a tiny file; a missing one means the defaults)."""
    preferences = load_preferences()
    app.side_share = preferences.side_share
    if preferences.theme != "dark":
        app.theme = THEMES[preferences.theme]
    if app.side_share != DEFAULT_SIDE_SHARE:
        app.call_after_refresh(apply_side_share, app)


def resize_side(app: ShellHost, step: int) -> None:
    """Make the side panes (catalog, diff) wider (`step` > 0) or narrower, in the wide layout."""
    if app.size.width < WIDE_FROM:
        app.notify("The panes are side by side only 120 columns and wider; here F2/F3/F4 show one at a time.", severity="warning")
        return
    index = SIDE_SHARES.index(app.side_share) if app.side_share in SIDE_SHARES else SIDE_SHARES.index(DEFAULT_SIDE_SHARE)
    app.side_share = SIDE_SHARES[max(0, min(len(SIDE_SHARES) - 1, index + step))]
    apply_side_share(app)
    remember(app)


def apply_side_share(app: ShellHost) -> None:
    """The chosen widths in the wide layout; none of their own in the narrow one (one pane fills the screen)."""
    wide = app.size.width >= WIDE_FROM and app.side_share != DEFAULT_SIDE_SHARE
    app.size_panes(app.side_share if wide else None)


def editor_command() -> list[str]:
    """$VISUAL, else $EDITOR, else vi: the command to edit a file with (split like a shell would)."""
    return shlex.split(os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi")


def edit_in_editor(app: ShellHost, prompt: PromptBox) -> None:
    """ctrl+g: the prompt in $EDITOR (the app suspends while it runs); what was saved comes back into the prompt box."""
    with tempfile.TemporaryDirectory(prefix=f"tuiagent-prompt-{os.getpid()}-") as folder:
        path = Path(folder) / "prompt.md"
        path.write_text(prompt.full_text, encoding="utf-8")
        command = [*editor_command(), str(path)]
        try:
            with app.suspend():
                done = subprocess.run(command, check=False)
        except (SuspendNotSupported, OSError) as error:  # a missing or unrunnable editor: OSError
            app.notify(f"Could not open the editor ({' '.join(command[:-1])}): {error}", severity="error")
            return
        if done.returncode != 0:
            app.notify(f"The editor exited with {done.returncode}: the prompt is unchanged.", severity="warning")
            return
        text = path.read_text(encoding="utf-8", errors="replace").rstrip("\n")
    prompt.set_text(text)
    prompt.take_focus()
