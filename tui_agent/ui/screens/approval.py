"""The approval modal: the exact command or diff the agent wants to run or apply, and yes/no."""

from __future__ import annotations

from rich.console import RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from tui_agent.ui.approval_detail import approval_detail


class ApprovalScreen(ModalScreen[bool]):
    """Dismisses with True (approved) or False (refused); Escape refuses."""

    BINDINGS = [
        Binding("y", "approve", "Approve"),
        Binding("n,escape", "refuse", "Refuse"),
    ]

    def __init__(self, *, kind: str, tool: str, summary: str, detail: str) -> None:
        super().__init__(classes=f"-{kind}")
        self.kind = kind
        self.tool = tool
        self.summary = summary
        self.detail = detail

    def compose(self) -> ComposeResult:
        with Vertical(id="approval-dialog", classes="dialog"):
            title = Text()
            title.append(f"Approve {self.kind}? ", style="bold")
            title.append(f"{self.tool}: ", style="bold #e5c07b")
            title.append(self.summary)
            yield Static(title, id="approval-title")
            with VerticalScroll(id="approval-detail"):
                yield Static(self._detail_renderable())
            with Horizontal(classes="dialog-buttons"):
                yield Button("Approve (y)", id="approve", variant="success")
                yield Button("Refuse (n)", id="refuse", variant="error")

    def _detail_renderable(self) -> RenderableType:
        return approval_detail(self.kind, self.tool, self.detail)

    def on_mount(self) -> None:
        self.query_one("#refuse", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "approve")

    def action_approve(self) -> None:
        self.dismiss(True)

    def action_refuse(self) -> None:
        self.dismiss(False)
