"""Which configured MCP servers the person approved: a store outside the project, keyed by the exact command.

`.agent/config.toml` can be written by the agent without asking, and `.mcp.json` in `auto` mode, while an MCP server
runs unsandboxed: so, as in Claude Code, a project's server starts only once its command, arguments and
environment were approved (`tuiagent mcp trust NAME`); any change to them needs a new approval. The approval also
pins the content of every project file the command names (`python server.py`, `sh mcp/run.sh`): agent code that
edits such a file makes the server ask again."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from pathlib import Path

from tui_agent.core.mcp.config import ServerConfig
from tui_agent.core.mcp.pinned import MAX_PINNED_BYTES, file_digest, project_files
from tui_agent.core.project import Project


def trust_file() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "tuiagent" / "mcp-trust.json"


def fingerprint(config: ServerConfig, root: Path | None = None) -> str:
    """The command, arguments and environment, plus (given the project root) the content of the project files
    the command runs."""
    files = project_files(config, root) if root is not None else []
    exact = json.dumps([config.command, list(config.args), sorted(config.env.items()), files])
    return hashlib.sha256(exact.encode()).hexdigest()


def _load() -> dict[str, dict[str, str]]:
    try:
        data = json.loads(trust_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _approved(project: Project) -> dict[str, str]:
    approved = _load().get(str(project.root), {})
    return approved if isinstance(approved, dict) else {}


def is_trusted(project: Project, config: ServerConfig) -> bool:
    """Approved by its command and files, in a trusted workspace (no project MCP server starts in an untrusted one)."""
    return workspace_trusted(project) and _approved(project).get(config.name) == fingerprint(config, project.root)


def workspace_trusted(project: Project) -> bool:
    from tui_agent.core.trust.check import check

    return check(project).trusted


def changed_files(project: Project, config: ServerConfig) -> list[str]:
    """The project files this server's command runs whose content differs from when it was approved (needs the
    content recorded at approval: `snapshot_dir`)."""
    changed = []
    for name, digest in project_files(config, project.root):
        saved = _snapshot_path(project, config, name)
        if saved.is_file() and file_digest(saved) != digest:
            changed.append(name)
    return changed


def file_diff(project: Project, config: ServerConfig, name: str) -> str:
    """A unified diff of a pinned file since it was approved ("" when no copy was kept)."""
    import difflib

    saved = _snapshot_path(project, config, name)
    try:
        before = saved.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
        after = (project.root / name).read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
    except OSError:
        return ""
    return "".join(difflib.unified_diff(before, after, f"{name} (approved)", f"{name} (now)"))


def snapshot_dir() -> Path:
    return trust_file().parent / "mcp-approved"


def _snapshot_path(project: Project, config: ServerConfig, name: str) -> Path:
    key = hashlib.sha256(json.dumps([str(project.root), config.name, name]).encode()).hexdigest()[:32]
    return snapshot_dir() / key


def trust(project: Project, configs: list[ServerConfig]) -> None:
    """Record these exact server commands (and the project files they run) as approved for this project."""
    data = _load()
    approved = data.get(str(project.root))
    approved = dict(approved) if isinstance(approved, dict) else {}
    approved.update({config.name: fingerprint(config, project.root) for config in configs})
    data[str(project.root)] = approved
    path = trust_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    for config in configs:  # a copy of each pinned file, so a later change can be shown as a diff
        for name, _digest in project_files(config, project.root):
            copy = _snapshot_path(project, config, name)
            copy.parent.mkdir(parents=True, exist_ok=True)
            with contextlib.suppress(OSError):  # no copy: a later change is asked about without a diff
                copy.write_bytes((project.root / name).read_bytes()[:MAX_PINNED_BYTES])
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".mcp-trust-")
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        json.dump(data, out, indent=1)
    os.replace(temporary, path)


def untrusted_message(config: ServerConfig, project: Project | None = None) -> str:
    """Why the server was not started and how to start it, with the diff of each pinned file that changed."""
    command = " ".join([config.command, *config.args])
    changed = changed_files(project, config) if project is not None else []
    diffs = "\n".join(file_diff(project, config, name) for name in changed) if project is not None else ""
    if project is not None and not workspace_trusted(project):
        from tui_agent.core.trust.check import check

        text = f"not started ({command!r} from {config.source} would run outside the sandbox): {check(project).reason()}"
    elif changed:
        text = (f"not started: {', '.join(changed)} changed since its command was approved ({command!r} from "
                f"{config.source}). Check the change, then run `tuiagent mcp trust {config.name}`")
    else:
        text = (f"not started: its command is not approved yet ({command!r} from {config.source}). "
                f"Check it, then run `tuiagent mcp trust {config.name}`")
    return f"{text}\n{diffs}".rstrip()
