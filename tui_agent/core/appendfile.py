"""Appending a whole record to a file: one write, cut back when it fails part-way (a full disk leaves no half line)."""

from __future__ import annotations

from pathlib import Path

from tui_agent.core import projectfs


def append_whole(path: Path, data: bytes) -> None:
    """Append `data` as one write; when it fails part-way (disk full), cut the file back so no half line is left.
    A link on the way (in `.agent/`, or at the file itself) is refused with projectfs.LinkRefused, never written through."""
    projectfs.append(path, data)
