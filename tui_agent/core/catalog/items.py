"""A tool's record and its row in a list (the catalog pane, `tools list`): status, StoreItem, ACCESS column."""

from __future__ import annotations

from tui_agent.core.catalog.models import ToolRecord, ToolSpec
from tui_agent.core.catalog.registry import Entry
from tui_agent.core.catalog.state import UsageStats
from tui_agent.core.project import AGENT_DIR
from tui_agent.core.versioning.store_interface import StoreItem, as_timestamp, first_line


def tool_access(spec: ToolSpec | None) -> str:
    """The ACCESS column: `writes` (WRITES = True), `network` (NETWORK = True), both, or `-`."""
    declared = (("writes", spec.writes), ("network", spec.network)) if spec is not None else ()
    flags = [flag for flag, on in declared if on]
    return ",".join(flags) or "-"


def tool_item(record: ToolRecord) -> StoreItem:
    """A tool's list entry: the first line of its description (or its error), status, usage, access."""
    spec, error = record.spec, record.error
    summary = first_line(spec.description) if spec is not None else ""
    error_text = f"{error.stage}: {error.message}" + (f" (line {error.line})" if error.line else "") if error is not None else ""
    return StoreItem(name=record.name, kind="tool", status=record.status, calls=record.calls,
                     last_used=as_timestamp(record.last_used), summary=error_text or summary, failures=record.failures,
                     mean_ms=record.mean_ms, error=error_text, access=tool_access(spec))


def tool_record(entry: Entry, stats: UsageStats | None, commit: str | None, drift: str | None) -> ToolRecord:
    """A registered tool as listed: `broken`, its drift status, `unused` or `ok`, with its usage and commit."""
    calls = stats.calls if stats else 0
    if entry.error is not None:
        status = "broken"
    elif drift is not None:
        status = drift
    else:
        status = "unused" if calls == 0 else "ok"
    return ToolRecord(name=entry.name, status=status, spec=entry.spec, error=entry.error, commit=commit, calls=calls,
                      failures=stats.failures if stats else 0, last_used=stats.last_used if stats else None,
                      mean_ms=stats.mean_ms if stats else None, path=f"{AGENT_DIR}/tools/{entry.name}.py")
