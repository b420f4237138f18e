"""Catalog rows for the catalog pane (the stores' `StoreItem`s, tools and recipes alike): sorted, filtered, formatted."""

from __future__ import annotations

import time

from tui_agent.core.versioning.store_interface import StoreItem as CatalogRow

__all__ = ["CatalogRow", "SORT_KEYS", "STATUSES", "filter_rows", "format_last_used", "sort_rows"]

STATUSES = ("ok", "broken", "drifted", "unused")
SORT_KEYS = ("name", "status", "calls", "last_used")
STATUS_ORDER = {"broken": 0, "drifted": 1, "unused": 2, "disabled": 3, "ok": 4}


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
