"""A session's event records read back as the typed events the turn emitted (the inverse of `SessionLog.append_event`).

Session files are hostile input (agent code can write `.agent/`): a record naming an unknown event, missing a field or
holding a value of the wrong type does not decode; it is left out and said, never a traceback.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tui_agent.core.errors import TuiAgentError
from tui_agent.core.events import (
    ApprovalDenied,
    BranchChanged,
    CatalogChanged,
    Event,
    FilesChanged,
    Notice,
    PermissionModeChanged,
    PlanUpdated,
    TextDelta,
    ThinkingDelta,
    ToolAuthored,
    ToolCallFinished,
    ToolCallStarted,
    TurnCancelled,
    TurnFailed,
    TurnFinished,
    TurnStarted,
    Usage,
    UsageChanged,
)

if TYPE_CHECKING:
    from pydantic import TypeAdapter

EVENT_TYPES: dict[str, type[Event]] = {
    cls.__name__: cls
    for cls in (TurnStarted, TextDelta, ToolCallStarted, ToolCallFinished, ApprovalDenied, ToolAuthored, CatalogChanged,
                FilesChanged, BranchChanged, UsageChanged, Notice, Usage, TurnFinished, TurnFailed, ThinkingDelta,
                PlanUpdated, PermissionModeChanged)
}
"""Every event a session records, by the name `SessionLog.append_event` writes."""

SHOWN_CHARS = 60
CANCELLED_RECORD = "cancelled"
"""The record a cancelled turn leaves (`{"type": "cancelled", "time": …}`): read back as a TurnCancelled event."""


def _cut(text: str) -> str:
    """Text a problem quotes, cut short (agent code chose it)."""
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + "…"


class BadEventRecord(TuiAgentError, ValueError):
    """A record that is not an event record, or whose event does not decode (unknown name, missing field, wrong type)."""


@dataclass
class DecodedEvents:
    """A session's events in order, and one line per event record that was left out (what was wrong with it)."""

    events: list[Event] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


_ADAPTERS: dict[str, TypeAdapter[Any]] = {}


def _adapter(cls: type[Event]) -> TypeAdapter[Any]:
    """pydantic's validator for one event type (pydantic loads with the first session read back, not at startup)."""
    adapter = _ADAPTERS.get(cls.__name__)
    if adapter is None:
        from pydantic import TypeAdapter

        adapter = _ADAPTERS[cls.__name__] = TypeAdapter(cls)
    return adapter


def is_event_record(record: object) -> bool:
    return isinstance(record, dict) and record.get("type") == "event"


def decode_event(record: object) -> Event:
    """The typed event of a `{"type": "event", "event": Name, "data": {...}}` record; BadEventRecord if it holds none.

    Decoding is strict: a string is not a number, 1 is not True, NaN and infinity are not durations or costs; fields
    the event does not have are ignored (a newer tuiagent may add some)."""
    if not is_event_record(record):
        raise BadEventRecord("not an event record")
    assert isinstance(record, dict)
    name = record.get("event")
    cls = EVENT_TYPES.get(name) if isinstance(name, str) else None
    if cls is None:
        raise BadEventRecord(f"unknown event {_cut(repr(name))}")
    try:
        data = json.dumps(record.get("data", {}), allow_nan=False)
    except (TypeError, ValueError, RecursionError) as error:
        raise BadEventRecord(f"{name}: its data is not plain JSON ({_cut(str(error))})") from None
    from pydantic import ValidationError

    try:
        event = _adapter(cls).validate_json(data, strict=True)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise BadEventRecord(f"{name}{'.' + _cut(where) if where else ''}: {_cut(first['msg'])}") from None
    assert isinstance(event, cls)
    return event


def decode_events(records: Iterable[object]) -> DecodedEvents:
    """Every event record's typed event, in order; other records are passed over, bad event records named in `problems`."""
    decoded = DecodedEvents()
    for number, record in enumerate(records, start=1):
        if isinstance(record, dict) and record.get("type") == CANCELLED_RECORD:
            decoded.events.append(TurnCancelled())
        if not is_event_record(record):
            continue
        try:
            decoded.events.append(decode_event(record))
        except BadEventRecord as error:
            decoded.problems.append(f"record {number}: {error}")
    return decoded
