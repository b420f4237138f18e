"""Never undo what tuiagent did not make: a revert, prune or restore refuses when the catalog file holds the user's uncommitted work."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Protocol

from tui_agent.core import projectfs
from tui_agent.core.versioning.gitpending import PendingChange

OUTSIDE_EDIT_MARKERS = ("edited outside tuiagent", "changed while tuiagent was not running", "deleted outside tuiagent")
"""Words in a journal message saying the change is a person's edit that tuiagent only recorded."""


class BlobSource(Protocol):
    def head_and_index_blobs(self, path: str) -> tuple[str | None, str | None] | None: ...
    def pending_change(self, path: str) -> PendingChange | None: ...
    def operation_in_progress(self) -> str | None: ...
    def unmerged(self, path: str) -> bool: ...


def blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def conflict_advice(rel: str, operation: str | None, verb: str) -> str:
    """The refusal for a path with unresolved conflicts: the state, and only ways out that keep both sides."""
    state = operation or ("a conflict is left in the index (from `git stash pop`, `git merge --squash`, "
                          "`git cherry-pick --no-commit` or similar)")
    return (f"refused: {rel} has an unresolved conflict: {state}. {verb} would drop one side of it. "
            f"Resolve it first: edit {rel} to keep what you want and `git add {rel}` to mark it resolved "
            f"(`git checkout --merge -- {rel}` brings the conflict markers back if needed). After `git stash pop` the "
            "stash entry is kept (`git stash list`) until you drop it. Nothing was changed.")


def unsaved_work(git: BlobSource, root: Path, rel: str, verb: str) -> str | None:
    """Why `verb` (revert, prune, restore) of the catalog file `rel` would discard the user's work, or None."""
    operation = git.operation_in_progress()
    if git.unmerged(rel):
        return conflict_advice(rel, operation, verb)
    blobs = git.head_and_index_blobs(rel)
    head_blob, index_blob = blobs if blobs is not None else (None, None)
    if blobs is not None and index_blob != head_blob:
        if operation is not None:
            return (f"refused: {rel} has staged changes and {operation}; {verb} would discard them. "
                    "Finish or abort that first, then try again. Nothing was changed.")
        return (f"refused: {rel} has staged changes that are not committed; {verb} would discard them. "
                f"Commit them (`git commit -- {rel}`), then try again. Nothing was changed.")
    try:
        disk = projectfs.read_bytes(root / rel)  # a link in .agent/ is refused (LinkRefused), never read through
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None
    if head_blob is not None and blob_id(disk) == head_blob:
        return None
    pending = git.pending_change(rel)
    if pending is not None and pending.content == disk and not any(m in pending.message for m in OUTSIDE_EDIT_MARKERS):
        return None  # tuiagent's own change, waiting for a commit
    return (f"refused: {rel} has edits that are not committed (made outside tuiagent); {verb} would discard them. "
            f"Commit them (`git add {rel}` and `git commit`) or move the file away, then try again.")
