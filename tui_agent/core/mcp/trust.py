"""Which configured MCP servers the person approved: a store outside the project, keyed by the exact command.

`.agent/config.toml` can be written by the agent without asking, and `.mcp.json` in `auto` mode, while an MCP server
runs unsandboxed: so, as in Claude Code, a project's server starts only once its command, arguments and
environment were approved (`tuiagent mcp trust NAME`); any change to them needs a new approval."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

from tui_agent.core.mcp.config import ServerConfig
from tui_agent.core.project import Project


def trust_file() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "tuiagent" / "mcp-trust.json"


def fingerprint(config: ServerConfig) -> str:
    exact = json.dumps([config.command, list(config.args), sorted(config.env.items())])
    return hashlib.sha256(exact.encode()).hexdigest()


def _load() -> dict[str, dict[str, str]]:
    try:
        data = json.loads(trust_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def is_trusted(project: Project, config: ServerConfig) -> bool:
    approved = _load().get(str(project.root), {})
    return isinstance(approved, dict) and approved.get(config.name) == fingerprint(config)


def trust(project: Project, configs: list[ServerConfig]) -> None:
    """Record these exact server commands as approved for this project (atomic write)."""
    data = _load()
    approved = data.get(str(project.root))
    approved = dict(approved) if isinstance(approved, dict) else {}
    approved.update({config.name: fingerprint(config) for config in configs})
    data[str(project.root)] = approved
    path = trust_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".mcp-trust-")
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        json.dump(data, out, indent=1)
    os.replace(temporary, path)


def untrusted_message(config: ServerConfig) -> str:
    command = " ".join([config.command, *config.args])
    return (f"not started: its command is not approved yet ({command!r} from {config.source}). "
            f"Check it, then run `tuiagent mcp trust {config.name}`")
