"""An MCP server asks the person for input (elicitation): the run form over its requested schema, Send or Decline."""

from __future__ import annotations

import contextlib
from typing import Any

from textual.css.query import NoMatches
from textual.widgets import Button, Static

from tui_agent.ui.screens.argument_form import ArgumentFormScreen


class ElicitationScreen(ArgumentFormScreen):
    """Dismisses with the answers (typed per the schema), or None: the server is told the person declined."""

    def __init__(self, server: str, message: str, schema: dict[str, Any]) -> None:
        super().__init__(f"MCP server {server}", schema, description=message)
        self.server = server

    def on_mount(self) -> None:
        super().on_mount()
        with contextlib.suppress(NoMatches):  # NoMatches: pruned as it mounts (the app quit as it opened)
            self.query_one("#form-title", Static).update(f"[b]The MCP server {self.server} asks[/b]")
            self.query_one("#run", Button).label = "Send (ctrl+s)"
            self.query_one("#cancel", Button).label = "Decline (esc)"
