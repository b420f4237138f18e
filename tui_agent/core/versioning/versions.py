"""Version look-ups shared by tool and recipe files: the diff from the previous version, the version a revert goes back to."""

from __future__ import annotations

from typing import Protocol

from tui_agent.core.errors import PipelineError
from tui_agent.core.versioning.gitqueries import HistoryEntry, unified_diff


class VersionedGit(Protocol):
    def history(self, path: str) -> list[HistoryEntry]: ...
    def show(self, path: str, rev: str) -> bytes | None: ...
    def diff(self, path: str, rev_a: str, rev_b: str | None = None) -> str: ...
    def shallow_note(self) -> str | None: ...


def diff_since(git: VersionedGit, rel: str, rev: str | None, label: str) -> str:
    """Diff of `rel` from `rev` (default: the version before its latest commit) to the work tree; `label` names it in errors."""
    if rev is None:
        history = git.history(rel)
        if not history:
            raise PipelineError("missing", f"{label} has no history in git")
        if len(history) == 1:  # only one version: show it whole, as an addition
            try:
                return git.diff(rel, f"{history[0].rev}^", history[0].rev)
            except ValueError:  # written by the repository's first commit: there is no parent to diff against
                shallow = git.shallow_note()
                if shallow:
                    raise PipelineError("missing", f"{label} has no earlier version in this clone: {shallow}") from None
                data = git.show(rel, history[0].rev)
                return unified_diff(rel, None, data, "absent", history[0].short) if data is not None else ""
        rev = history[1].rev
    try:
        return git.diff(rel, rev)
    except ValueError as exc:
        raise PipelineError("missing", str(exc)) from exc


def revert_target(git: VersionedGit, rel: str, current: bytes | None, rev: str | None, label: str) -> tuple[str, bytes]:
    """(revision, content) a revert of `rel` goes back to: `rev`, or by default the newest committed content unlike `current`."""
    if rev is None:
        for entry in git.history(rel):
            if entry.deleted:
                continue
            data = git.show(rel, entry.rev)
            if data is not None and data != current:
                return entry.rev, data
        shallow = git.shallow_note()
        if shallow:
            raise PipelineError("missing", f"{label} has no earlier version in this clone to revert to: {shallow}")
        raise PipelineError("missing", f"{label} has no earlier version to revert to")
    try:
        data = git.show(rel, rev)
    except ValueError as exc:
        raise PipelineError("missing", f"cannot read {label} at {rev}: {exc}") from exc
    if data is None:
        raise PipelineError("missing", f"{label} does not exist at {rev}")
    return rev, data
