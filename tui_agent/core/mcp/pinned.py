"""The project files an MCP server's command runs, with the sha256 of each: what an approval pins."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from tui_agent.core.mcp.config import ServerConfig

MAX_PINNED_BYTES = 4_000_000


def project_files(config: ServerConfig, root: Path) -> list[tuple[str, str]]:
    """(path as written, sha256 of its content) for the command and each argument naming a file of the project
    (run from the project root; a symlink counts by what it points to, wherever that is)."""
    found: list[tuple[str, str]] = []
    top = os.path.realpath(root)
    for word in (config.command, *config.args):
        candidate = word.split("=", 1)[1] if word.startswith("-") and "=" in word else word
        if not candidate or candidate.startswith("-"):
            continue
        path = Path(candidate) if os.path.isabs(candidate) else root / candidate
        inside = os.path.abspath(path) == top or os.path.abspath(path).startswith(top + os.sep)
        if not inside or not path.is_file():
            continue
        found.append((candidate, file_digest(path)))
    return found


def file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    try:
        with path.open("rb") as handle:
            digest.update(handle.read(MAX_PINNED_BYTES + 1))
    except OSError as error:
        return f"unreadable: {error.strerror}"
    return digest.hexdigest()
