"""What a project grants itself through its files: permission settings, automatic recipes, MCP servers, each with a
digest of its content, so trust is approved by content and a pull that changes a grant is seen."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tui_agent.core import projectfs
from tui_agent.core.project import ConfigError, Project
from tui_agent.core.settings import Settings

if TYPE_CHECKING:
    from tui_agent.core.recipes.model import Recipe

AUTOMATIC_TRIGGERS = ("session_start", "file_changed", "tool_authored", "tool_drifted")
"""Recipe triggers that fire without the person asking (`command` recipes run only when typed)."""


@dataclass(frozen=True)
class Grant:
    """One thing the project would get once trusted: `key` names it, `digest` pins its content, `text` says it."""

    key: str
    text: str
    digest: str


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()


def settings_grants(settings: Settings) -> list[Grant]:
    """Grants of the committed `.agent/config.toml`."""
    grants: list[Grant] = []
    if settings.permission_mode == "auto":
        grants.append(Grant("permissions.mode", "permission mode auto: edits accepted without asking", _digest("auto")))
    for rule in settings.allow_rules:
        network = "" if "(" in rule else " (a tool-wide rule: its network calls too)"
        grants.append(Grant(f"permissions.allow:{rule}", f"allow rule {rule}: calls it covers are not asked{network}",
                            _digest(rule)))
    for name in settings.sandbox_env:
        grants.append(Grant(f"sandbox.env:{name}", f"environment variable {name} passed to agent code", _digest(name)))
    for folder in settings.sandbox_paths:
        grants.append(Grant(f"sandbox.paths:{folder}", f"folder {folder} readable by agent code", _digest(folder)))
    if settings.web_search:
        grants.append(Grant("web.search", f"web search: up to {settings.web_search_max_uses} searches a request, run by "
                            "the API (they reach the network and are billed per search)",
                            _digest(settings.web_search_max_uses)))
    serve = settings.extra.get("mcp", {}).get("serve") if isinstance(settings.extra.get("mcp"), dict) else None
    if isinstance(serve, dict) and any(serve.get(key) for key in ("allow_writes", "allow_network", "run_python", "allow")):
        grants.append(Grant("mcp.serve", f"`tuiagent mcp serve` options {json.dumps(serve, sort_keys=True)}", _digest(serve)))
    return grants


def local_grants(project: Project) -> list[Grant]:
    """The rules of `.agent/config.local.toml` (git-ignored, but a repository can still commit one)."""
    from tui_agent.core.agent.allow_config import local_rules

    rules, _problems = local_rules(project)
    return [Grant(f"local.allow:{rule}", f"allow rule {rule} (from .agent/config.local.toml)", _digest(rule))
            for rule in rules]


def recipe_grants(project: Project) -> list[Grant]:
    """Recipes that fire by themselves, each pinned by its file's bytes (an unreadable one too: it may be fixed)."""
    paths = sorted(project.recipes_dir.glob("*.toml")) if project.recipes_dir.is_dir() else []
    return [grant for path in paths if (grant := recipe_grant(path)) is not None]


def read_recipe(name: str, raw: bytes) -> Recipe | Exception:
    """The recipe a file holds, or what parsing it raised (PipelineError, or whatever a hostile file provokes)."""
    from tui_agent.core.recipes.recipefile import parse_recipe

    try:
        return parse_recipe(name, raw)
    except Exception as error:  # edge: the bytes are the project's (an attacker's): any failure is shown, never raised
        return error


def recipe_grant(path: Path) -> Grant | None:
    """The grant of one recipe file: None when it is missing or fires only when typed (a `command` recipe)."""
    try:
        raw = projectfs.read_bytes(path)  # a link in .agent/ is refused: never read, never a grant
    except OSError:
        return None
    recipe = read_recipe(path.stem, raw)
    if isinstance(recipe, Exception):  # shown, pinned, never run
        return Grant(f"recipe:{path.stem}", f"recipe {path.stem} (not valid now: {recipe})", _digest(raw.hex()))
    if recipe.trigger.on not in AUTOMATIC_TRIGGERS:
        return None
    return Grant(f"recipe:{path.stem}", f"recipe {path.stem}: {recipe_line(recipe)}", _digest(raw.hex()))


def recipe_line(recipe: Any) -> str:
    """"on session_start → prompt '…'" for a parsed Recipe."""
    paths = f" {list(recipe.trigger.paths)}" if recipe.trigger.paths else ""
    action = recipe.action
    what = (f"call tool {action.tool} {json.dumps(action.args)}" if action.tool is not None
            else f"send the prompt {(action.prompt or '').strip()[:200]!r}")
    return f"on {recipe.trigger.on}{paths} → {what}"


def mcp_grants(project: Project) -> list[Grant]:
    """Each configured MCP server (it runs outside the sandbox): its command and every project file it can load."""
    from tui_agent.core.mcp.config import load_server_configs
    from tui_agent.core.mcp.pinned import changed_files, server_coverage

    grants: list[Grant] = []
    configs, _problems = load_server_configs(project)
    for config in configs:
        covered = server_coverage(config, project.root)
        pinned = f"; loads {covered.summary()}" if covered.sources else ""
        changed = changed_files(project, config)
        pinned += f" ({', '.join(changed)} changed since `tuiagent mcp trust`)" if changed else ""
        env = f" env {sorted(config.env)}" if config.env else ""
        text = f"MCP server {config.name} (outside the sandbox): {config.launch}{env}{pinned}"
        pins: list[Any] = [config.command, list(config.args), config.env, covered.files, covered.refusal]
        grants.append(Grant(f"mcp:{config.name}", text, _digest(pins + [config.url, config.headers] if config.url else pins)))
    return grants


GIT_PREFIX = "git"
"""Keys of the grants of the repository's command-running git configuration and hooks (`git:`, `git.hook:`, `git.error`)."""


def git_grants(project: Project) -> list[Grant]:
    """The command-running keys the repository's own config (and what it includes) sets, and its hooks: each runs a
    command once trusted (in the commits made for the person); before, the git door neutralises them all."""
    from tui_agent.core.versioning.gitdoor import GitConfigError, GitDoorRefusal, hook_digest, scan_at

    try:
        found = scan_at(project.root)
    except (GitConfigError, GitDoorRefusal) as error:
        return [Grant("git.error", f"git configuration: {error}", _digest(str(error)))]
    if found is None:
        return []
    grants: list[Grant] = []
    seen: dict[str, int] = {}
    for entry in found.entries:
        key = f"git:{entry.key}@{entry.origin}"
        seen[key] = seen.get(key, 0) + 1
        grants.append(Grant(key if seen[key] == 1 else f"{key}#{seen[key]}", f"git config {entry.text()}", entry.digest))
    for path, sha in found.hooks:
        grants.append(Grant(f"git.hook:{path}", f"git hook {path} (sha256 {sha[:12]})", hook_digest(path, sha)))
    return grants


def git_approval(grants: list[Grant]) -> str:
    """The digest the git door compares with the repository's configuration now (gitdoor.approval_digest)."""
    from tui_agent.core.versioning.gitdoor import approval_digest

    return approval_digest([grant.digest for grant in grants if grant.key.startswith(("git:", "git.hook:"))])


def project_grants(project: Project) -> list[Grant]:
    """Everything the project would grant itself once trusted (a broken config grants nothing: it does not open)."""
    try:
        settings = project.load_settings()
    except ConfigError:
        settings = Settings()
    return [*settings_grants(settings), *local_grants(project), *recipe_grants(project), *mcp_grants(project),
            *git_grants(project)]


def fingerprint(grants: list[Grant]) -> dict[str, str]:
    return {grant.key: grant.digest for grant in grants}


def changes(approved: dict[str, str], grants: list[Grant]) -> list[str]:
    """What differs from the approved set, one line each ("new: …", "changed: …", "removed: …")."""
    now = {grant.key: grant for grant in grants}
    lines = [f"{'new' if grant.key not in approved else 'changed'}: {grant.text}"
             for grant in grants if approved.get(grant.key) != grant.digest]
    lines += [f"removed: {key}" for key in approved if key not in now]
    return lines
