"""What the approval modal shows under its question: a diff with its gutter, a tool's JSON arguments, or a command."""

from __future__ import annotations

import json

from rich.console import Group, RenderableType
from rich.text import Text

from tui_agent.core.agent.command_view import needs_plain_view, shape, visible_lines
from tui_agent.ui.diffs import highlighted_source, render_unified


def is_unified_diff(detail: str) -> bool:
    return detail.startswith(("--- ", "diff --git")) or ("\n+++ " in detail and "\n@@ " in detail)


def json_arguments(detail: str) -> dict[str, object] | None:
    """The detail as a JSON object (a catalog tool's arguments), or None."""
    try:
        value = json.loads(detail)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def approval_detail(kind: str, tool: str, detail: str) -> RenderableType:
    """A diff only for a real diff; a WRITES/NETWORK tool's arguments as labelled JSON (no diff exists before it runs)."""
    if kind == "plan":  # propose_plan's markdown
        from rich.markdown import Markdown

        return Markdown(detail)
    if is_unified_diff(detail):
        return render_unified(detail)
    arguments = json_arguments(detail)
    if arguments is not None:
        note = {"write": f"{tool} declares WRITES = True: it may change project files; what it writes is known only after it runs.",
                "network": f"{tool} declares NETWORK: it may reach the network."}.get(kind, "")
        parts: list[RenderableType] = [Text("arguments", style="bold dim"),
                                       highlighted_source(json.dumps(arguments, indent=2, ensure_ascii=False), "json", line_numbers=False)]
        if note:
            parts.append(Text(note, style="dim italic"))
        return Group(*parts)
    if kind == "write":
        return Text(detail)
    return command_detail(tool, detail)


MARKER = "bold black on yellow"


def command_detail(tool: str, command: str) -> RenderableType:
    """The whole command: its size first; padding, control characters and empty-line runs shown as labelled
    markers (⟨400 spaces⟩, ⟨\\x1b⟩, ⟨59 empty lines⟩) instead of highlighted source, which would hide them."""
    header = Text(f"command: {shape(command)}", style="bold dim")
    if not needs_plain_view(command):
        source = highlighted_source(command, "python" if tool == "run_python" else "bash",
                                    line_numbers=command.count("\n") > 0)
        return Group(header, source)
    rows = visible_lines(command)
    width = max(len(numbers) for numbers, _row in rows)
    body = Text()
    for index, (numbers, row) in enumerate(rows):
        if index:
            body.append("\n")
        body.append(f"{numbers:>{width}} │ ", style="dim")
        for piece, is_marker in marker_pieces(row):
            body.append(piece, style=MARKER if is_marker else "")
    note = Text("markers stand for what the command really holds there; nothing is left out", style="dim italic")
    return Group(header, body, note)


def marker_pieces(row: str) -> list[tuple[str, bool]]:
    """Split a visible row into plain text and ⟨…⟩ markers."""
    pieces: list[tuple[str, bool]] = []
    rest = row
    while rest:
        start = rest.find("⟨")
        end = rest.find("⟩", start)
        if start < 0 or end < 0:
            pieces.append((rest, False))
            break
        if start:
            pieces.append((rest[:start], False))
        pieces.append((rest[start:end + 1], True))
        rest = rest[end + 1:]
    return pieces
