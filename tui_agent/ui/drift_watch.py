"""Live drift: the project files the catalog's tools depend on, stamped cheaply so the pane notices their edits."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def dependency_files(root: Path, catalog: Any) -> list[Path]:
    """Every file a tool's DEPENDS_ON matches or a run read, plus their folders (a new matching file changes its folder)."""
    checker = getattr(catalog, "drift_checker", None)
    if checker is None:
        return []
    files: set[Path] = set()
    for record in catalog.tools():
        spec = record.spec
        if spec is None or record.commit is None:
            continue
        files_read = catalog.state.files_read(record.name)
        if not (spec.depends_on or files_read):
            continue
        for rel in checker.watched_files(record.commit, spec.depends_on, files_read):
            path = root / rel
            files.update((path, path.parent))
    return sorted(files)


def stamps(paths: list[Path]) -> tuple[tuple[int, int], ...]:
    """(mtime_ns, size) of each path; (0, 0) for one that is gone."""
    result = []
    for path in paths:
        try:
            stat = path.stat()
            result.append((stat.st_mtime_ns, stat.st_size))
        except OSError:
            result.append((0, 0))
    return tuple(result)
