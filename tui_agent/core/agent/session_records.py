"""The raw records of a session file (every complete JSON line), and the result an unanswered call is given."""

from __future__ import annotations

import json
import os
from pathlib import Path
from tui_agent.core import projectfs
from tui_agent.core.content import JsonObject

INTERRUPTED_RESULT = "interrupted: the session ended before this call returned a result"


def read_records(path: Path) -> list[JsonObject]:
    """Every complete JSON line of the file; a truncated or corrupt line (a crash mid-write) is skipped."""
    records: list[JsonObject] = []
    with open(projectfs.open_file(path, os.O_RDONLY), encoding="utf-8", errors="replace") as handle:
        for line in handle:
            try:
                record = json.loads(line)
            except (json.JSONDecodeError, RecursionError):  # RecursionError: nested deeper than the parser goes
                continue
            if isinstance(record, dict):
                records.append(record)
    return records
