"""What the approval modal shows under its question: a diff with its gutter, a tool's JSON arguments, or a command."""

from __future__ import annotations

import json

from rich.console import Group, RenderableType
from rich.text import Text

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
    if is_unified_diff(detail):
        return render_unified(detail)
    arguments = json_arguments(detail)
    if arguments is not None:
        note = {"write": f"{tool} declares WRITES = True: it may change project files; what it writes is known only after it runs.",
                "network": f"{tool} declares NETWORK = True: it may reach the network."}.get(kind, "")
        parts: list[RenderableType] = [Text("arguments", style="bold dim"),
                                       highlighted_source(json.dumps(arguments, indent=2, ensure_ascii=False), "json", line_numbers=False)]
        if note:
            parts.append(Text(note, style="dim italic"))
        return Group(*parts)
    if kind == "write":
        return Text(detail)
    return highlighted_source(detail, "python" if tool == "run_python" else "bash", line_numbers=detail.count("\n") > 0)
