"""Journal of catalog changes awaiting a git commit (`.agent/cache/pending.json`), and the lock that serialises catalog commits."""

from __future__ import annotations

import base64
import fcntl
import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tui_agent.core.sharedfile import wait_for_flock
from tui_agent.core import projectfs

JOURNAL_VERSION = 1


@dataclass(frozen=True)
class PendingChange:
    """One path's change awaiting a commit: its new content (None = delete) and why it is not committed yet.

    `base_blob` is the path's blob in HEAD when the change was recorded (None when absent or no
    commit existed): a later catch-up skips the change if someone else committed that path since.
    A deletion that replaced a pending write keeps what it removed in `removed`: no commit holds it, and a restore
    brings it back rather than HEAD's older version.
    """

    path: str
    content: bytes | None
    message: str
    reason: str
    base_blob: str | None
    recorded_at: float
    removed: bytes | None = None

    def describe(self) -> str:
        action = "delete" if self.content is None else "write"
        return f"{action}: {self.message} ({self.reason})"

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "message": self.message,
            "reason": self.reason,
            "base_blob": self.base_blob,
            "recorded_at": self.recorded_at,
        }
        if self.content is None:
            data["deleted"] = True
        else:
            data.update(_content_json(self.content))
        if self.removed is not None:
            data["removed"] = _content_json(self.removed)
        return data

    @classmethod
    def from_json(cls, path: str, data: dict[str, Any]) -> "PendingChange":
        removed = data.get("removed")
        return cls(
            path=path,
            content=None if data.get("deleted") else _content_of(data),
            message=str(data.get("message", "")),
            reason=str(data.get("reason", "")),
            base_blob=data.get("base_blob"),
            recorded_at=float(data.get("recorded_at", 0.0)),
            removed=_content_of(removed) if data.get("deleted") and isinstance(removed, dict) else None,
        )


def _content_json(content: bytes) -> dict[str, str]:
    try:
        return {"text": content.decode("utf-8")}
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(content).decode("ascii")}


def _content_of(data: dict[str, Any]) -> bytes:
    """The bytes of a `text` or `base64` entry (KeyError/TypeError/ValueError when it has neither: a hand edit)."""
    if "text" in data:
        return str(data["text"]).encode("utf-8")
    return base64.b64decode(str(data["base64"]))


def removed_by_deletion(earlier: PendingChange | None, content: bytes | None) -> bytes | None:
    """What a new pending change keeps of the entry it replaces: a deletion of a pending write keeps that write's
    content (or what an earlier pending deletion kept); anything else keeps nothing."""
    if content is not None or earlier is None:
        return None
    return earlier.content if earlier.content is not None else earlier.removed


class PendingJournal:
    """The pending changes file: atomic rewrites (temp file + rename), removed when empty."""

    def __init__(self, file: Path) -> None:
        self.file = file

    def load(self) -> dict[str, PendingChange]:
        try:
            raw = projectfs.read_text(self.file)  # a link in .agent/ is refused (LinkRefused), never read through
        except FileNotFoundError:
            return {}
        try:
            data = json.loads(raw)
            return {path: PendingChange.from_json(path, entry) for path, entry in data["changes"].items()}
        except (ValueError, KeyError, TypeError, AttributeError):
            # Only a hand edit can corrupt it (writes are atomic): keep it aside for inspection.
            self.file.replace(self.file.with_name(f"{self.file.name}.corrupt-{int(time.time())}"))
            return {}

    def save(self, changes: dict[str, PendingChange]) -> None:
        if not changes:
            self.file.unlink(missing_ok=True)
            return
        payload = {
            "version": JOURNAL_VERSION,
            "changes": {path: change.to_json() for path, change in sorted(changes.items())},
        }
        projectfs.write_atomic(self.file, json.dumps(payload, indent=1).encode("utf-8"), sync=False)


LOCK_WAIT_S = 360.0
"""The longest wait for the gitstore lock: longer than a commit with its hooks (read at each wait)."""


@contextmanager
def exclusive_lock(lock_file: Path, timeout_s: float | None = None) -> Iterator[None]:
    """Hold an exclusive flock on `lock_file` (released by the kernel even if the process is killed); TimeoutError
    naming the file after `timeout_s` (LOCK_WAIT_S when not given)."""
    timeout_s = LOCK_WAIT_S if timeout_s is None else timeout_s
    fd = projectfs.open_file(lock_file, os.O_RDWR | os.O_CREAT, 0o644)  # folders made; no link followed
    try:
        wait_for_flock(fd, timeout_s, lambda: TimeoutError(
            f"waited {timeout_s:g} s for {lock_file}, held by another process committing the catalog"), poll_s=0.02)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
