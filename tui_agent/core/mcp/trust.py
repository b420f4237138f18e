"""Which configured MCP servers the person approved: a store outside the project, keyed by the exact command.

`.agent/config.toml` can be written by the agent without asking, and `.mcp.json` in `auto` mode, while an MCP server
runs unsandboxed: so, as in Claude Code, a project's server starts only once its command, arguments and
environment were approved (`tuiagent mcp trust NAME`); any change to them needs a new approval. The approval also
pins the content of every project file the server can load (coverage.py: the folder tree of `srv/server.py`, the
package of `python -m pkg`): agent code that edits, adds or removes such a file makes the server ask again, with the
diff."""

from __future__ import annotations

import contextlib
import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

from tui_agent.core.errors import TuiAgentError
from tui_agent.core.mcp.config import ServerConfig
from tui_agent.core.mcp.coverage import MAX_BYTES, Coverage, file_digest
from tui_agent.core.mcp.pinned import (
    MANIFEST,
    changed_files as changed_files,
    copy_name,
    project_files as project_files,
    server_coverage as server_coverage,
    server_dir,
    snapshot_dir as snapshot_dir,
    trust_file as trust_file,
)
from tui_agent.core.project import Project
from tui_agent.core.sharedfile import update_json

MAX_DIFF_CHARS = 40_000
MAX_DIFF_BYTES = 1_000_000
"""A covered file bigger than this (or binary) is shown in a diff by one line with its digest."""


class McpTrustRefused(TuiAgentError, ValueError):
    """A server's approval cannot cover what it loads (a folder too large to pin); the message says which."""


def fingerprint(config: ServerConfig, root: Path | None = None, covered: Coverage | None = None) -> str:
    """The command, arguments and environment, plus (given the project root) the content of the project files
    the command runs."""
    if covered is None:
        covered = server_coverage(config, root) if root is not None else Coverage()
    exact = json.dumps([*config.identity(), covered.files, covered.refusal])
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
    if not workspace_trusted(project):
        return False
    covered = server_coverage(config, project.root)
    return covered.refusal is None and _approved(project).get(config.name) == fingerprint(config, covered=covered)


def workspace_trusted(project: Project) -> bool:
    from tui_agent.core.trust.check import check

    return check(project).trusted


def file_diff(project: Project, config: ServerConfig, name: str) -> str:
    """A unified diff of a covered file since it was approved (from nothing when it is new, to nothing when gone)."""
    import difflib

    def lines(path: Path) -> list[str]:
        try:
            raw = path.read_bytes()[:MAX_DIFF_BYTES + 1]
        except OSError:
            return []
        if len(raw) > MAX_DIFF_BYTES or b"\0" in raw:
            return [f"({name}: binary or over {MAX_DIFF_BYTES // 1000} kB, sha256 {file_digest(path)[:12]})\n"]
        return raw.decode("utf-8", errors="replace").splitlines(keepends=True)

    before = lines(server_dir(project, config) / copy_name(name))
    after = [] if (project.root / name).is_symlink() else lines(project.root / name)
    return "".join(difflib.unified_diff(before, after, f"{name} (approved)", f"{name} (now)"))


def _keep_copies(project: Project, config: ServerConfig, covered: Coverage) -> None:
    """A copy of each covered file (not of dependency folders') and the list of their digests, so a later change is
    shown as a diff."""
    folder = server_dir(project, config)
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True, exist_ok=True)
    files = covered.files
    for name, _digest in files:
        path = project.root / name
        if name in covered.uncopied:
            continue
        with contextlib.suppress(OSError):  # no copy: a later change is shown without its old lines
            if not path.is_symlink():
                (folder / copy_name(name)).write_bytes(path.read_bytes()[:MAX_BYTES])
    (folder / MANIFEST).write_text(json.dumps(dict(files)), encoding="utf-8")


def trust(project: Project, configs: list[ServerConfig]) -> None:
    """Record these exact server commands (and the project files they can load) as approved for this project;
    McpTrustRefused, recording nothing, when one loads a folder too large to pin."""
    covered = {config.name: server_coverage(config, project.root) for config in configs}
    refused = [f"{name}: {found.summary()}" for name, found in covered.items() if found.refusal is not None]
    if refused:
        raise McpTrustRefused("; ".join(refused))
    for config in configs:
        _keep_copies(project, config, covered[config.name])
    fingerprints = {config.name: fingerprint(config, covered=covered[config.name]) for config in configs}

    def add(data: Any) -> tuple[Any, None]:
        data = data if isinstance(data, dict) else {}
        approved = data.get(str(project.root))
        data[str(project.root)] = {**(approved if isinstance(approved, dict) else {}), **fingerprints}
        return data, None

    update_json(trust_file(), add)


def untrusted_message(config: ServerConfig, project: Project | None = None) -> str:
    """Why the server was not started and how to start it, with the diff of each pinned file that changed."""
    command = config.launch
    changed = changed_files(project, config) if project is not None else []
    diffs = "\n".join(file_diff(project, config, name) for name in changed) if project is not None else ""
    if len(diffs) > MAX_DIFF_CHARS:
        diffs = diffs[:MAX_DIFF_CHARS] + "\n… (the rest of the diff is not shown)"
    refusal = server_coverage(config, project.root).refusal if project is not None else None
    if project is not None and not workspace_trusted(project):
        from tui_agent.core.trust.check import check

        where = "would be called" if config.url else "would run"
        text = f"not started ({command!r} from {config.source} {where} outside the sandbox): {check(project).reason()}"
    elif refusal is not None:
        text = f"not started ({command!r} from {config.source} would run outside the sandbox): its files cannot be pinned: {refusal}"
    elif changed:
        text = (f"not started: {', '.join(changed)} changed since its command was approved ({command!r} from "
                f"{config.source}). Check the change, then run `tuiagent mcp trust {config.name}`")
    else:
        text = (f"not started: its command is not approved yet ({command!r} from {config.source}). "
                f"Check it, then run `tuiagent mcp trust {config.name}`")
    return f"{text}\n{diffs}".rstrip()
