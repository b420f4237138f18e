"""Rebuild conversation entries from a session transcript's event records (for /resume and large sessions)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from tui_agent.ui.completion import shown_prompt
from tui_agent.ui.widgets.messages import Entry


def entries_from_records(records: Iterable[dict[str, Any]]) -> list[Entry]:
    """Fold `{"type": "event", "event": Name, "data": {...}}` records into the entries the conversation shows."""
    entries: list[Entry] = []
    tools: dict[str, Entry] = {}
    streaming: Entry | None = None
    for record in records:
        if record.get("type") != "event":
            continue
        name = record.get("event")
        data = record.get("data") or {}
        if name == "TextDelta":
            if streaming is None:
                streaming = Entry("assistant")
                entries.append(streaming)
            streaming.text += str(data.get("text", ""))
            continue
        streaming = None
        if name == "TurnStarted":
            entries.append(Entry("user", text=shown_prompt(str(data.get("prompt", "")))))
        elif name == "ToolCallStarted":
            entry = Entry(
                "tool",
                call_id=str(data.get("call_id", "")),
                tool=str(data.get("name", "")),
                arguments=dict(data.get("arguments") or {}),
                authored=bool(data.get("authored", False)),
            )
            tools[entry.call_id] = entry
            entries.append(entry)
        elif name == "ToolCallFinished":
            entry = tools.get(str(data.get("call_id", "")))
            if entry is not None:
                entry.result = str(data.get("result", ""))
                entry.is_error = bool(data.get("is_error", False))
                entry.duration_ms = float(data.get("duration_ms", 0.0) or 0.0)
                entry.authored = entry.authored or bool(data.get("authored", False))
        elif name == "Notice":
            entries.append(Entry("notice", text=str(data.get("message", "")), level=str(data.get("level", "info"))))
        elif name == "TurnFailed":
            entries.append(Entry("notice", text=f"turn failed: {data.get('message', '')}", level="error"))
        elif name == "ApprovalDenied":
            entries.append(Entry("notice", text=f"{data.get('name', '')}: {data.get('reason', '')}", level="warning"))
    return entries
