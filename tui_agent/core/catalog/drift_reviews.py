"""Drift reviews: `.agent/drift-reviews.json`, committed, says a person looked at a tool's drift and accepted it.

One entry per tool: the version reviewed (its source sha), the commit it was reviewed at, and the blob of each of its
dependency files then (None: absent). Drift of that version is then measured against those blobs instead of the
commit the version was written at. Committed with the catalog so a teammate's clone agrees. The file is hostile
input (anyone can commit it): malformed entries are ignored, which only makes drift show again."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tui_agent.core import projectfs

REVIEWS_PATH = ".agent/drift-reviews.json"
MAX_BYTES = 512 * 1024
_SHA = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")
_SOURCE_SHA = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class Review:
    """One accepted drift: the tool version, the commit it was reviewed at, its dependency files' blobs then."""

    source_sha: str
    commit: str | None
    files: dict[str, str | None]
    by: str = ""


def load_reviews(root: Path) -> dict[str, Review]:
    path = root / REVIEWS_PATH
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_BYTES:
            return {}
        raw = json.loads(projectfs.read_text(path))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError, MemoryError):  # a committed file: hostile
        return {}
    tools = raw.get("tools") if isinstance(raw, dict) else None
    if not isinstance(tools, dict):
        return {}
    return {name: review for name, item in tools.items() if isinstance(name, str) and (review := _review(item))}


def _review(item: Any) -> Review | None:
    if not isinstance(item, dict) or not isinstance(item.get("source_sha"), str):
        return None
    if not _SOURCE_SHA.fullmatch(item["source_sha"]):
        return None
    commit = item.get("commit")
    if commit is not None and not (isinstance(commit, str) and _SHA.fullmatch(commit)):
        return None
    files = item.get("files")
    if not isinstance(files, dict):
        return None
    clean: dict[str, str | None] = {}
    for rel, blob in files.items():
        if not isinstance(rel, str) or rel.startswith("/") or ".." in rel.split("/"):
            return None
        if blob is not None and not (isinstance(blob, str) and _SHA.fullmatch(blob)):
            return None
        clean[rel] = blob
    by = item.get("by")
    return Review(item["source_sha"], commit, clean, by if isinstance(by, str) else "")


def dump_reviews(reviews: dict[str, Review]) -> bytes:
    """The file's bytes: sorted, one stable layout, so a merge of two teammates' reviews conflicts only when they
    reviewed the same tool."""
    tools = {name: {"source_sha": r.source_sha, "commit": r.commit, "by": r.by, "files": dict(sorted(r.files.items()))}
             for name, r in sorted(reviews.items())}
    return (json.dumps({"version": 1, "tools": tools}, indent=2, sort_keys=False) + "\n").encode("utf-8")
