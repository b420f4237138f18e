"""In-memory registry of tools: the last good version of each (spec + runnable copy) and the current file's error."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from tui_agent.core.catalog.errors import PipelineError
from tui_agent.core.catalog.models import ToolSpec


@dataclass(frozen=True)
class Entry:
    """One registered tool: `spec`/`runnable` are the last good version; `error` is set when the file on disk is broken."""

    name: str
    spec: ToolSpec | None
    runnable: Path | None
    disk_sha: str | None
    error: PipelineError | None = None
    commit: str | None = None

    @property
    def broken(self) -> bool:
        return self.error is not None


class Registry:
    """Name → Entry. Callers hold the catalog lock while mutating."""

    def __init__(self) -> None:
        self._entries: dict[str, Entry] = {}

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, name: str) -> Entry | None:
        return self._entries.get(name)

    def names(self) -> list[str]:
        return sorted(self._entries)

    def entries(self) -> list[Entry]:
        return [self._entries[name] for name in sorted(self._entries)]

    def register(self, name: str, spec: ToolSpec, runnable: Path, commit: str | None) -> Entry:
        entry = Entry(name=name, spec=spec, runnable=runnable, disk_sha=spec.source_sha, error=None, commit=commit)
        self._entries[name] = entry
        return entry

    def mark_broken(self, name: str, error: PipelineError, disk_sha: str | None) -> Entry:
        """Keep the last good version (if any) callable; remember why the file on disk is rejected."""
        previous = self._entries.get(name)
        if previous is None:
            entry = Entry(name=name, spec=None, runnable=None, disk_sha=disk_sha, error=error)
        else:
            entry = replace(previous, error=error, disk_sha=disk_sha)
        self._entries[name] = entry
        return entry

    def set_disk_sha(self, name: str, disk_sha: str | None) -> None:
        entry = self._entries.get(name)
        if entry is not None:
            self._entries[name] = replace(entry, disk_sha=disk_sha)

    def set_commit(self, name: str, commit: str | None) -> None:
        entry = self._entries.get(name)
        if entry is not None:
            self._entries[name] = replace(entry, commit=commit)

    def restore_entry(self, name: str, entry: Entry | None) -> None:
        """Put back a previous entry (or none) after a failed operation."""
        if entry is None:
            self._entries.pop(name, None)
        else:
            self._entries[name] = entry

    def unregister(self, name: str) -> Entry | None:
        return self._entries.pop(name, None)
