"""Git-ignored files a turn's sandbox runs changed (a virtualenv, build output): recorded in the turn's journal entry,
put back by /undo when that is safe, and listed as not undone, with the reason, otherwise (issue 23)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Protocol

from tui_agent.core.sandbox import IgnoredChange, Stamp, is_startup_file
from tui_agent.core.undo.restore import RestoreError, remove_under, safe_path, write_under
from tui_agent.core.versioning.gitrunner import GitFailure

CHANGES = ("created", "changed", "removed")
LISTED = 20


class BlobStore(Protocol):
    """Where the bytes of changed files are kept (the checkpoints' git objects)."""

    def store(self, data: bytes) -> str: ...
    def stored(self, sha: str) -> bytes | None: ...


@dataclass(frozen=True)
class IgnoredRecord:
    """One ignored file a run of the turn changed: `after` its stamp after the run (None: removed), `blob` its bytes
    before the run when kept, else `not_kept` says why."""

    path: str
    change: str
    after: Stamp | None
    blob: str | None = None
    not_kept: str = ""


@dataclass(frozen=True)
class NotUndone:
    """An ignored file /undo left as it is, and why; `startup` marks a Python start-up file (.pth, sitecustomize)."""

    path: str
    change: str
    reason: str
    startup: bool

    def describe(self) -> str:
        kind = ", a Python start-up file that every interpreter reading its folder runs" if self.startup else ""
        return f"{self.path} ({self.change}{kind}: {self.reason})"

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "change": self.change, "reason": self.reason, "startup_file": self.startup}


def to_records(store: BlobStore, changes: list[IgnoredChange]) -> list[IgnoredRecord]:
    """The journal's records of `changes`, the kept bytes written to `store`."""
    records: list[IgnoredRecord] = []
    for change in changes:
        blob, reason = None, change.not_kept
        if change.before is not None:
            try:
                blob = store.store(change.before)
            except (GitFailure, OSError) as error:
                reason = f"its content before the run could not be kept ({error})"
        records.append(IgnoredRecord(change.path, change.change, change.after, blob, reason))
    return records


def to_json(records: list[IgnoredRecord]) -> list[dict[str, Any]]:
    return [{"path": r.path, "change": r.change, "after": list(r.after) if r.after is not None else None,
             "blob": r.blob, "not_kept": r.not_kept} for r in records]


def from_json(raw: Any) -> list[IgnoredRecord]:
    """The records of a journal entry; malformed ones are skipped (the session file is untrusted)."""
    records: list[IgnoredRecord] = []
    for item in raw if isinstance(raw, list) else []:
        if not isinstance(item, dict) or not isinstance(item.get("path"), str) or item.get("change") not in CHANGES:
            continue
        after, blob, why = item.get("after"), item.get("blob"), item.get("not_kept")
        if after is not None and not (isinstance(after, list) and len(after) == 3
                                      and all(isinstance(n, int) and not isinstance(n, bool) for n in after)):
            continue
        records.append(IgnoredRecord(item["path"], item["change"], (after[0], after[1], after[2]) if after else None,
                                     blob if isinstance(blob, str) else None, why if isinstance(why, str) else ""))
    return records


def undo_ignored(root: Path, store: BlobStore, turns: list[list[IgnoredRecord]]) -> tuple[list[str], list[NotUndone]]:
    """Take back the ignored changes of `turns` (oldest first): a created file removed, a changed or removed one put
    back from its kept bytes, each only when it is still as the last run left it. (put back, not undone)."""
    first: dict[str, IgnoredRecord] = {}
    last: dict[str, IgnoredRecord] = {}
    for records in turns:
        for record in records:
            first.setdefault(record.path, record)
            last[record.path] = record
    restored: list[str] = []
    left: list[NotUndone] = []
    for path in sorted(first):
        existed, exists = first[path].change != "created", last[path].change != "removed"
        if not existed and not exists:
            continue  # created and removed again by the turns: nothing to take back
        change = "changed" if existed and exists else ("created" if exists else "removed")
        reason = _take_back(root, store, first[path], last[path])
        if reason is None:
            restored.append(path)
        else:
            left.append(NotUndone(path, change, reason, is_startup_file(PurePosixPath(path).name)))
    return restored, left


def summary(restored: list[str], left: list[NotUndone]) -> str:
    """The sentence /undo adds about ignored files: every start-up file named, the others up to LISTED."""
    parts: list[str] = []
    if restored:
        parts.append(f"Git-ignored files put back: {_listed(restored, [])}.")
    if left:
        shown = [item.describe() for item in left]
        parts.append(f"Git-ignored files NOT undone: {_listed(shown, [item.startup for item in left])}.")
    return " ".join(parts)


def _listed(items: list[str], always: list[bool]) -> str:
    named = [item for index, item in enumerate(items) if index < LISTED or (always and always[index])]
    more = len(items) - len(named)
    return "; ".join(named) + (f"; and {more} more" if more else "")


def _take_back(root: Path, store: BlobStore, first: IgnoredRecord, last: IgnoredRecord) -> str | None:
    """None once the file is as before the turns; else why it was left as it is."""
    if os.path.isabs(first.path):
        return "it is outside the project; delete or restore it yourself"
    try:
        target = safe_path(root, first.path)
    except RestoreError as error:
        return str(error)
    now = _stamp(target)
    if now != last.after:
        if last.after is None:
            return "it was made again after the run removed it"
        return "it was changed again after the run" if now is not None else "it was removed after the run"
    if first.change == "created":
        try:
            remove_under(root, first.path)
        except OSError as error:
            return f"it could not be removed ({error})"
        except RestoreError as error:  # a folder on the way became a link after the check
            return str(error)
        return None
    data = store.stored(first.blob) if first.blob else None
    if data is None:
        return first.not_kept or "its content before the run was not kept"
    try:
        write_under(root, first.path, data, _mode(target, now))
    except OSError as error:
        return f"it could not be written ({error})"
    except RestoreError as error:  # a folder on the way became a link after the check
        return str(error)
    return None


def _stamp(path: Path) -> Stamp | None:
    try:
        info = path.lstat()
    except OSError:
        return None
    return (info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def _mode(target: Path, now: Stamp | None) -> int:
    """The mode the file has now (kept), or 0644 for one made again."""
    return target.lstat().st_mode & 0o777 if now is not None and not target.is_symlink() else 0o644
