"""Checks on what tuiagent reads back from `.agent/state.db` and `.agent/cache/`: agent code on a weak sandbox tier could have written it."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path, PurePosixPath
from typing import Any

COMMIT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def commit_id(value: object) -> str | None:
    """`value` when it is a full commit id (never an option or a revision expression), else None."""
    return value if isinstance(value, str) and COMMIT_ID.fullmatch(value) else None


def project_path(value: object) -> bool:
    """Whether `value` is a plain project-relative path (no absolute path, no `..`)."""
    if not isinstance(value, str) or not value or "\0" in value:
        return False
    pure = PurePosixPath(value)
    return not pure.is_absolute() and ".." not in pure.parts


def validation(raw: object) -> dict[str, Any] | None:
    """A cached validation result, or None when it is not JSON or not shaped like one the inspector returns."""
    from tui_agent.core.catalog.pipeline import result_problem

    try:
        result = json.loads(raw) if isinstance(raw, (str, bytes)) else None
    except ValueError:
        return None
    if not isinstance(result, dict) or not isinstance(result.get("ok"), bool):
        return None
    if result["ok"]:
        return result if result_problem(result) is None else None
    return result if isinstance(result.get("name"), str) and isinstance(result.get("error"), dict) else None


def intact_copy(path: Path, sha: str) -> bool:
    """Whether the cached copy at `path` is a regular file whose content still hashes to `sha`."""
    try:
        if path.is_symlink() or not path.is_file():
            return False
        return hashlib.sha256(path.read_bytes()).hexdigest() == sha
    except OSError:
        return False
