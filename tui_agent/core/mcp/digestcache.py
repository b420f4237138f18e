"""The digests of pinned files, remembered by each file's identity and times in this process and between processes
(`$XDG_CACHE_HOME/tuiagent/mcp-digests.json`, outside the project), so a pinned virtualenv is read once, not at every
start. A write changes a file's ctime, which no unprivileged process can set; a file changed in the last
SETTLE_S seconds is never remembered (a second write within the same clock tick could keep its ctime)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from tui_agent.core.sharedfile import read_json, replace_text

SETTLE_S = 2.0
MAX_ENTRIES = 200_000
"""Past this many, the file keeps only what this process used."""

_known: dict[str, str] | None = None
_used: dict[str, str] = {}
_added = False


def cache_file() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tuiagent" / "mcp-digests.json"


def key_of(path: Path, info: os.stat_result, limit: int) -> str | None:
    """The file's key, or None when it changed too recently to be remembered."""
    if info.st_ctime_ns > time.time_ns() - int(SETTLE_S * 1e9):
        return None
    return "\0".join(str(part) for part in (path, info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns,
                                            info.st_ctime_ns, limit))


def _table() -> dict[str, str]:
    global _known
    if _known is None:
        data = read_json(cache_file())
        _known = {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}
    return _known


def recall(key: str) -> str | None:
    found = _table().get(key)
    if found is not None:
        _used[key] = found
    return found


def remember(key: str, digest: str) -> None:
    global _added
    _table()[key] = digest
    _used[key] = digest
    _added = True


def save() -> None:
    """Write what was added since the last save (nothing when nothing was; an unwritable cache is left as it is)."""
    global _added
    if not _added:
        return
    table = _table()
    kept = table if len(table) <= MAX_ENTRIES else dict(_used)
    try:
        replace_text(cache_file(), json.dumps(kept), mode=0o600)
    except OSError:
        return
    _added = False
