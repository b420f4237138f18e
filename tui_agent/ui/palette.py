"""The command palette's tuiagent commands: slash commands, pane keys and the selected catalog row's actions."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Protocol

from textual.app import SystemCommand

from tui_agent.ui.host import PromptBox, UIHost

if TYPE_CHECKING:
    from tui_agent.ui.catalog_rows import CatalogRow
    from tui_agent.ui.command_registry import CommandRegistry
    from tui_agent.ui.widgets.catalog_pane import CatalogPane
    from tui_agent.ui.widgets.diff_pane import DiffPane

ROW_ACTIONS = (
    ("view", "v", "view the source"),
    ("run", "r", "run with an argument form"),
    ("prune", "d", "prune (asks first)"),
    ("revert", "u", "revert to the previous version"),
    ("revert_to", "U", "pick a version from the history and revert to it"),
    ("history", "h", "pick a version and see its diff"),
    ("drift", "f", "drift diff and test re-run"),
    ("accept_drift", "A", "accept a drifted tool's drift: reviewed at the current commit (asks first)"),
    ("repair", "R", "hand a drifted or broken tool to the agent"),
)


class PaletteHost(UIHost, Protocol):
    """The app's own actions, which the palette offers beside the slash commands (the panes' own actions are given
    with the panes, to palette_commands)."""

    commands: CommandRegistry

    def action_slash(self, name: str) -> None: ...

    def action_cancel_turn(self) -> None: ...

    def action_edit_prompt(self) -> None: ...

    def action_resize_side(self, step: int) -> None: ...

    def action_cycle_permission_mode(self) -> None: ...

    def action_zoom(self) -> None: ...

    def request_catalog_action(self, action: str, row: CatalogRow) -> None: ...


def escape(text: str) -> str:
    """Text shown literally in the palette (its help is markup; textual.markup.escape misses `[ID]`)."""
    return text.replace("[", "\\[")


def show_pruned(app: UIHost, pane: CatalogPane) -> None:
    """The catalog pane's pruned view, where enter restores the selected tool."""
    app.action_show_pane("catalog")
    pane.show_pruned = True


def prefill_prompt(app: UIHost, prompt: PromptBox, text: str) -> None:
    app.action_show_pane("conversation")
    prompt.set_text(text)


def focus_filter(app: UIHost, pane: CatalogPane) -> None:
    app.action_show_pane("catalog")
    pane.action_focus_filter()


def palette_commands(app: PaletteHost, prompt: PromptBox, catalog: CatalogPane, diff: DiffPane) -> Iterator[SystemCommand]:
    """Every slash command, pane and catalog action, for the command palette (the panes' own actions on the panes given)."""
    for command in app.commands.commands():
        yield SystemCommand(f"/{command.name}", escape(command.label), lambda name=command.name: app.action_slash(name))
    yield SystemCommand("Cancel the turn", "stop the agent (esc)", app.action_cancel_turn)
    yield SystemCommand("!command", "run a shell command yourself (in the sandbox, approved like run_shell): types ! in the prompt",
                        lambda: prefill_prompt(app, prompt, "!"))
    yield SystemCommand("Copy the last code block", "to the clipboard (/copy code)", lambda: app.action_slash("copy code"))
    yield SystemCommand("Edit the prompt in $EDITOR", "ctrl+g", app.action_edit_prompt)
    yield SystemCommand("Expand pasted text", "a long paste's token in the prompt box becomes its text, to edit (ctrl+o)",
                        prompt.action_expand_paste)
    yield SystemCommand("Side panes: wider", "alt+← (wide layout)", lambda: app.action_resize_side(1))
    yield SystemCommand("Side panes: narrower", "alt+→ (wide layout)", lambda: app.action_resize_side(-1))
    yield SystemCommand("Permission mode: next", "ask → auto → read-only → plan (shift+tab)", app.action_cycle_permission_mode)
    yield SystemCommand("Zoom the pane", "maximize the focused pane, or restore the layout (F5)", app.action_zoom)
    yield SystemCommand("Catalog: show pruned tools", "list pruned tools to restore one (p in the catalog)", lambda: show_pruned(app, catalog))
    for pane, key in (("conversation", "F2"), ("catalog", "F3"), ("diff", "F4")):
        yield SystemCommand(f"Show the {pane} pane", key, lambda pane=pane: app.action_show_pane(pane))
    yield SystemCommand("Diff: unified / side-by-side", "m in the diff pane", diff.action_toggle_mode)
    yield SystemCommand("Catalog: sort by next column", "s in the catalog", catalog.action_cycle_sort)
    yield SystemCommand("Catalog: filter", "/ in the catalog", lambda: focus_filter(app, catalog))
    selected = catalog.selected()
    if selected is not None:
        for action, key, what in ROW_ACTIONS:
            yield SystemCommand(f"{action.replace('_', ' ').capitalize()} {selected.name}", f"{what} ({key})",
                                lambda action=action, row=selected: app.request_catalog_action(action, row))
