"""Plain catalog rows for the catalog pane: built from tool and recipe records, sorted, filtered and formatted."""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

STATUSES = ("ok", "broken", "drifted", "unused")
SORT_KEYS = ("name", "status", "calls", "last_used")
STATUS_ORDER = {"broken": 0, "drifted": 1, "unused": 2, "disabled": 3, "ok": 4}


@dataclass(frozen=True)
class CatalogRow:
    """One line of the catalog pane: a tool or a recipe and what the person needs to judge it."""

    name: str
    kind: Literal["tool", "recipe"]
    status: str
    calls: int
    last_used: float | None
    summary: str
    failures: int = 0
    mean_ms: float | None = None
    error: str = ""
    access: str = "-"  # what a tool may do beyond reading the project: "writes", "network", "writes,network" or "-"

    @property
    def key(self) -> str:
        return f"{self.kind}:{self.name}"


def as_timestamp(value: Any) -> float | None:
    """A POSIX timestamp from a float, a datetime or an ISO string; None when unknown."""
    if value is None or value == "":
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, datetime):
        return value.timestamp()
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value).timestamp()
        except ValueError:
            return None
    return None


def first_line(text: str | None) -> str:
    return (text or "").strip().splitlines()[0].strip() if (text or "").strip() else ""


def tool_access(spec: Any) -> str:
    """The CLI's ACCESS column: `writes` (WRITES = True), `network` (NETWORK = True), both, or `-`."""
    flags = [flag for flag in ("writes", "network") if spec is not None and bool(getattr(spec, flag, False))]
    return ",".join(flags) or "-"


def row_from_tool(record: Any) -> CatalogRow:
    """A row from a catalog `ToolRecord` (name, status, spec, error, calls, failures, last_used, mean_ms)."""
    spec = getattr(record, "spec", None)
    error = getattr(record, "error", None)
    summary = first_line(getattr(spec, "description", "")) if spec is not None else ""
    error_text = ""
    if error is not None:
        line = getattr(error, "line", None)
        error_text = f"{getattr(error, 'stage', 'error')}: {getattr(error, 'message', error)}" + (f" (line {line})" if line else "")
        summary = error_text  # a broken file's error matters more than its last good version's description
    return CatalogRow(
        name=record.name,
        kind="tool",
        status=str(getattr(record, "status", "ok")),
        calls=int(getattr(record, "calls", 0) or 0),
        last_used=as_timestamp(getattr(record, "last_used", None)),
        summary=summary,
        failures=int(getattr(record, "failures", 0) or 0),
        mean_ms=getattr(record, "mean_ms", None),
        error=error_text,
        access=tool_access(spec),
    )


def row_from_recipe(record: Any) -> CatalogRow:
    """A row from a `RecipeRecord` (name, status, recipe, error, problems, runs, failures, last_run)."""
    error = getattr(record, "error", None)
    problems = tuple(getattr(record, "problems", ()) or ())
    recipe = getattr(record, "recipe", None)
    summary = first_line(getattr(record, "description", ""))
    if not summary and recipe is not None:
        summary = f"on {recipe.trigger.on}: {recipe.action.describe()}"
    error_text = f"{getattr(error, 'stage', 'error')}: {getattr(error, 'message', error)}" if error is not None else "; ".join(problems)
    if error_text and not summary:
        summary = error_text
    return CatalogRow(
        name=record.name,
        kind="recipe",
        status=str(getattr(record, "status", "ok")),
        calls=int(getattr(record, "runs", 0) or 0),
        last_used=as_timestamp(getattr(record, "last_run", None)),
        summary=summary,
        failures=int(getattr(record, "failures", 0) or 0),
        error=error_text,
    )


def sort_rows(rows: list[CatalogRow], key: str, *, reverse: bool = False) -> list[CatalogRow]:
    """Rows sorted by `key` (one of SORT_KEYS); ties broken by name."""
    if key == "calls":
        return sorted(rows, key=lambda row: (-row.calls if not reverse else row.calls, row.name))
    if key == "last_used":
        return sorted(rows, key=lambda row: (-(row.last_used or 0.0) if not reverse else (row.last_used or 0.0), row.name))
    if key == "status":
        return sorted(rows, key=lambda row: (STATUS_ORDER.get(row.status, 9), row.name), reverse=reverse)
    return sorted(rows, key=lambda row: (row.name, row.kind), reverse=reverse)


def filter_rows(rows: list[CatalogRow], query: str) -> list[CatalogRow]:
    """Rows matching every word of `query`; `status:broken`, `is:recipe` / `is:tool` narrow by field."""
    words = query.lower().split()
    if not words:
        return list(rows)

    def matches(row: CatalogRow) -> bool:
        for word in words:
            if word.startswith("status:"):
                if row.status != word.removeprefix("status:"):
                    return False
            elif word.startswith("is:"):
                if row.kind != word.removeprefix("is:"):
                    return False
            elif word not in row.name.lower() and word not in row.summary.lower():
                return False
        return True

    return [row for row in rows if matches(row)]


def format_last_used(timestamp: float | None, now: float | None = None) -> str:
    """'never', 'just now', '5m ago', '3h ago', '2d ago'."""
    if timestamp is None:
        return "never"
    elapsed = max(0.0, (now if now is not None else time.time()) - timestamp)
    if elapsed < 60:
        return "just now"
    if elapsed < 3600:
        return f"{int(elapsed // 60)}m ago"
    if elapsed < 86400:
        return f"{int(elapsed // 3600)}h ago"
    return f"{int(elapsed // 86400)}d ago"
