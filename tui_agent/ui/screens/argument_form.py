"""The run form: one input per argument of a tool's JSON schema; dismisses with the typed arguments."""

from __future__ import annotations

import contextlib
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.css.query import NoMatches
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Label, Select, Static

from tui_agent.ui.typed import TypedInput
from tui_agent.ui.schema_form import ArgumentError, FormField, collect_arguments, fields_from_schema


class ArgumentFormScreen(ModalScreen[dict[str, Any] | None]):
    """Dismisses with the arguments dict (validated against the field types), or None when cancelled."""

    BINDINGS = [Binding("escape", "cancel", "Cancel"), Binding("ctrl+s", "run", "Run")]

    def __init__(self, tool_name: str, schema: dict[str, Any] | None, *, description: str = "") -> None:
        super().__init__()
        self.tool_name = tool_name
        self.fields: list[FormField] = fields_from_schema(schema)
        self.description = description

    def compose(self) -> ComposeResult:
        # the whole dialog scrolls (Tab scrolls to the focused field) with the buttons docked below, at any terminal size
        with VerticalScroll(id="form-dialog", classes="dialog"):
            with Vertical(id="form-footer"):
                yield Static("", id="form-error")
                with Horizontal(classes="dialog-buttons"):
                    yield Button("Run (ctrl+s)", id="run", variant="success")
                    yield Button("Cancel (esc)", id="cancel")
            yield Static(f"[b]Run {self.tool_name}[/b]", id="form-title")
            if self.description:
                yield Static(self.description, id="form-description", classes="dim")
            with Vertical(id="form-fields"):
                if not self.fields:
                    yield Static("This tool takes no arguments.", classes="dim")
                for field in self.fields:
                    label = f"{field.name}{' *' if field.required else ''}  [dim]{field.type}[/dim]"
                    yield Label(label, classes="form-label")
                    if field.description:
                        yield Static(field.description, classes="form-help")
                    yield self._input_for(field)

    def _input_for(self, field: FormField) -> Input | Checkbox | Select[str]:
        widget_id = f"arg-{field.name}"
        if field.type == "boolean":
            return Checkbox(field.name, value=bool(field.default), id=widget_id)
        if field.choices:
            options = [(str(choice), str(choice)) for choice in field.choices]
            default = str(field.default) if field.default is not None else Select.NULL
            return Select(options, value=default, id=widget_id, allow_blank=not field.required)
        value = "" if field.default is None or field.type in ("array", "object") else str(field.default)
        return TypedInput(value=value, placeholder=field.placeholder, id=widget_id)

    def on_mount(self) -> None:
        with contextlib.suppress(NoMatches):  # NoMatches: pruned as it mounts (the app quit as it opened)
            self.query_one(f"#arg-{self.fields[0].name}" if self.fields else "#run").focus()

    def raw_values(self) -> dict[str, str | bool]:
        values: dict[str, str | bool] = {}
        for field in self.fields:
            widget = self.query_one(f"#arg-{field.name}")
            if isinstance(widget, Checkbox):
                values[field.name] = widget.value
            elif isinstance(widget, Select):
                values[field.name] = "" if widget.value is Select.NULL else str(widget.value)
            elif isinstance(widget, Input):
                values[field.name] = widget.value
        return values

    def action_run(self) -> None:
        try:
            arguments = collect_arguments(self.fields, self.raw_values())
        except ArgumentError as exc:
            self.query_one("#form-error", Static).update(f"[red]{exc}[/red]")
            return
        self.dismiss(arguments)

    def action_cancel(self) -> None:
        self.dismiss(None)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_run()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "run":
            self.action_run()
        else:
            self.action_cancel()
