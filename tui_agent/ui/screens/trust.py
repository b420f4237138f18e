"""The trust screen: what an untrusted project would get (grants, recipes, tools, MCP servers, virtualenv); Trust or
continue restricted. Shown before the project opens, so nothing of it has run yet."""

from __future__ import annotations

import asyncio
import importlib
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Static

from tui_agent.core.bulkload import import_in_bulk
from tui_agent.ui.screens.scroll_keys import scroll
from tui_agent.ui.typeahead import QuestionScreen

if TYPE_CHECKING:
    from tui_agent.core.trust import Description, TrustStatus


SCROLL_KEYS = {"up": "scroll_up", "down": "scroll_down", "pageup": "scroll_page_up", "pagedown": "scroll_page_down",
               "home": "scroll_home", "end": "scroll_end"}
"""The detail can be longer than the screen: these keys scroll it (the buttons keep the focus)."""


class TrustScreen(QuestionScreen[bool]):
    """Dismisses with True (trust the project with exactly what it lists) or False (continue restricted)."""

    BINDINGS = [Binding("t", "answer(True)", "Trust"), Binding("r,escape", "answer(False)", "Continue restricted"),
                *(Binding(key, f"scroll_detail('{how}')", show=False) for key, how in SCROLL_KEYS.items())]
    AUTO_FOCUS = "#restricted"

    def __init__(self, description: Description, status: TrustStatus) -> None:
        super().__init__()
        self.description = description
        self.status = status

    def compose(self) -> ComposeResult:
        with Vertical(id="trust-dialog", classes="dialog"):
            yield Static(Text(self.question(), style="bold"), id="trust-question")
            with VerticalScroll(id="trust-detail"):
                yield Static(Text(self.detail()), id="trust-grants")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Trust (t)", id="trust", variant="warning")
                yield Button("Continue restricted (r)", id="restricted", variant="primary")

    def question(self) -> str:
        if self.status.state == "changed":
            return (f"{self.description.root}: what this project grants changed since you trusted it. "
                    "Trust it with the changes?")
        return (f"Do you trust {self.description.root}? Until you do it opens restricted: its permission grants, "
                "recipes, tools and MCP servers do not run and its virtualenv is not used.")

    def detail(self) -> str:
        lines = []
        if self.status.changed:
            lines += ["Changed since you trusted it:", *(f"  {change}" for change in self.status.changed), ""]
        empty: list[str] = []
        for title, items in self.description.sections():
            if items == ["none"]:  # said once below, not as a section each
                name = title.split(" (")[0]
                empty.append(name if name[:2].isupper() else name[0].lower() + name[1:])
                continue
            lines.append(f"{title}:")
            lines.extend(f"  - {item}" for item in items)
        if empty:
            lines.append(("It grants nothing: no " if len(empty) == len(self.description.sections()) else "None: ")
                         + ", ".join(empty) + ".")
        lines.append("\nYou can trust it later with `tuiagent trust`, and stop with `tuiagent untrust`.")
        return "\n".join(lines)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "trust")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)

    def action_scroll_detail(self, how: str) -> None:
        if how in SCROLL_KEYS.values():
            scroll(self.query_one("#trust-detail", VerticalScroll), how)


async def settle_trust(app: App[int], root: Path, *, trust_for_run: bool) -> None:
    """Before the project opens: an untrusted (or changed) project shows the trust screen; Trust records it."""
    if trust_for_run:
        return
    trust = await asyncio.to_thread(import_in_bulk, "tui_agent.core.trust")  # collector paused, as the SDK's import
    project_module = importlib.import_module("tui_agent.core.project")
    project = project_module.Project.at(root)
    status = await asyncio.to_thread(trust.check, project)
    if status.trusted:
        return
    description = await asyncio.to_thread(trust.describe, project)
    if await app.push_screen_wait(TrustScreen(description, status)):
        await asyncio.to_thread(trust.grant, project)
