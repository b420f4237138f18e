"""Checks on the commit journal read back from `.agent/cache/pending.json`: anything agent code could have planted there is hostile.

An entry is kept only when its path names a catalog file (`.agent/tools/<name>.py`, `.agent/recipes/<name>.toml`
or `.agent/.gitignore`, no symlink on the way) and what it would commit is exactly what is on disk now (the
caller writes a file before committing it, so a deferred change always matches the disk until someone changes
the file again). A change whose write was put back after a failed commit no longer matches: it is dropped, never
committed behind the user's back.
"""

from __future__ import annotations

import re
from collections.abc import Set as AbstractSet
from pathlib import Path

from tui_agent.core.versioning.gitpending import PendingChange

JOURNAL_PATH = re.compile(r"\.agent/(?:tools/[A-Za-z0-9_-]{1,64}\.py|recipes/[A-Za-z0-9_-]{1,64}\.toml|\.gitignore|drift-reviews\.json)")
MAX_ENTRY_BYTES = 1024 * 1024


def path_problem(root: Path, path: str) -> str | None:
    """Why `path` (project-relative) may not be committed from the journal, or None."""
    if not isinstance(path, str) or not JOURNAL_PATH.fullmatch(path):
        return f"{path!r} is not a catalog file (.agent/tools/<name>.py, .agent/recipes/<name>.toml, .agent/.gitignore, .agent/drift-reviews.json)"
    current = root
    for part in path.split("/"):
        current = current / part
        if current.is_symlink():
            return f"{path} goes through a symlink ({current.relative_to(root).as_posix()})"
    return None


def disk_problem(root: Path, change: PendingChange) -> str | None:
    """Why the journaled content no longer matches the disk (it was put back or changed since), or None."""
    file = root / change.path
    try:
        data: bytes | None = file.read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        data = None
    except OSError as exc:
        return f"{change.path} cannot be read ({exc})"
    if change.content is not None and len(change.content) > MAX_ENTRY_BYTES:
        return f"{change.path}: the journaled content is over {MAX_ENTRY_BYTES} bytes"
    if data != change.content:
        state = "absent" if data is None else "different"
        return f"{change.path} on disk is {state} now"
    return None


def trusted(root: Path, journal: dict[str, PendingChange], keep: AbstractSet[str] = frozenset(), *,
            check_disk: bool = True) -> tuple[dict[str, PendingChange], list[str]]:
    """The entries safe to commit, and one note per dropped entry; paths in `keep` are the caller's own, not checked.

    Without `check_disk` only the paths are checked (for listing what is pending)."""
    kept: dict[str, PendingChange] = {}
    notes: list[str] = []
    for path, change in journal.items():
        if path in keep:
            kept[path] = change
            continue
        problem = path_problem(root, path)
        if problem is None and check_disk:
            problem = disk_problem(root, change)
        if problem is None:
            kept[path] = change
        else:
            notes.append(f"dropped a deferred change from {root.name}/.agent/cache/pending.json: {problem}")
    return kept, notes
