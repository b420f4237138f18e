"""The queued prompts above the prompt box: shown in order, editable (e / enter) and cancellable (x / delete)."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from tui_agent.ui.prompt_queue import PromptQueue

PREVIEW_CHARS = 90


class QueuedPrompts(OptionList):
    """Mirrors a `PromptQueue`; hidden while it is empty. Posts `EditRequested` so the app can refill the prompt box."""

    BINDINGS = [
        Binding("e,enter", "edit", "Edit"),
        Binding("x,delete,backspace", "cancel_prompt", "Cancel it"),
    ]

    @dataclass
    class EditRequested(Message):
        """The person took a queued prompt back to edit it (it left the queue)."""

        text: str

    def __init__(self, queue: PromptQueue, *, id: str | None = None) -> None:
        super().__init__(id=id, compact=True)
        self.queue = queue
        queue.add_listener(self.sync)

    def on_mount(self) -> None:
        self.sync()

    def sync(self) -> None:
        """Show the queue as it is now."""
        previous = self.highlighted
        self.clear_options()
        for number, item in enumerate(self.queue, start=1):
            line = Text()
            line.append(f"queued {number}", style="bold #e5c07b")
            line.append(f" ({item.source}) " if item.source not in ("person", "command") else " ", style="dim")
            preview = " ".join(item.text.split())
            line.append(preview if len(preview) <= PREVIEW_CHARS else preview[: PREVIEW_CHARS - 1] + "…")
            self.add_option(Option(line))
        if len(self.queue):
            self.highlighted = min(previous or 0, len(self.queue) - 1)
        self.display = bool(self.queue)
        self.border_title = f"{len(self.queue)} queued: sent in order after the turn · tab here, e edit, x cancel"

    def _take(self) -> str | None:
        index = self.highlighted
        if index is None or not 0 <= index < len(self.queue):
            return None
        return self.queue.remove(index).text

    def action_edit(self) -> None:
        text = self._take()
        if text is not None:
            self.post_message(self.EditRequested(text))

    def action_cancel_prompt(self) -> None:
        text = self._take()
        if text is not None:
            self.notify(f"cancelled the queued prompt: {text[:60]}")
