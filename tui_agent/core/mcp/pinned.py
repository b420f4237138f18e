"""What an MCP server's approval pins: the project files it can load (coverage.py), and the record kept at approval
(their digests and copies under the person's config folder) that tells which of them changed since."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from tui_agent.core.mcp.config import ServerConfig
from tui_agent.core.mcp.coverage import Coverage, coverage
from tui_agent.core.project import Project

MANIFEST = "manifest.json"


def trust_file() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "tuiagent" / "mcp-trust.json"


def server_coverage(config: ServerConfig, root: Path) -> Coverage:
    """The project files this server can load (coverage.py: its script's folder tree, its `-m` package)."""
    return coverage(config.command, config.args, root)


def project_files(config: ServerConfig, root: Path) -> list[tuple[str, str]]:
    """(project-relative path, sha256 of its content) of every project file the server can load."""
    return server_coverage(config, root).files


def snapshot_dir() -> Path:
    return trust_file().parent / "mcp-approved"


def server_dir(project: Project, config: ServerConfig) -> Path:
    """Where the copies and the digests of a server's covered files are kept at its approval."""
    key = hashlib.sha256(json.dumps([str(project.root), config.name]).encode()).hexdigest()[:32]
    return snapshot_dir() / key


def copy_name(name: str) -> str:
    return hashlib.sha256(name.encode()).hexdigest()[:32]


def approved_manifest(project: Project, config: ServerConfig) -> dict[str, str] | None:
    """The covered files' digests as they were approved, or None without a record."""
    try:
        data = json.loads((server_dir(project, config) / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return {str(key): str(value) for key, value in data.items()} if isinstance(data, dict) else None


def changed_files(project: Project, config: ServerConfig) -> list[str]:
    """The covered project files whose content differs from when the server was approved, added since or removed
    (needs the record kept at approval: `snapshot_dir`)."""
    before = approved_manifest(project, config)
    if before is None:
        return []
    now = dict(project_files(config, project.root))
    return sorted(name for name in {*before, *now} if before.get(name) != now.get(name))
