"""Project allow rules saved in `.agent/config.toml` (`[permissions] allow = [...]`), edited without losing the rest of the file."""

from __future__ import annotations

from pathlib import Path

import tomlkit
from tomlkit.exceptions import TOMLKitError

from tui_agent.core.project import ConfigError, Project


def _load(path: Path) -> tomlkit.TOMLDocument:
    try:
        return tomlkit.parse(path.read_text(encoding="utf-8")) if path.exists() else tomlkit.document()
    except (TOMLKitError, UnicodeDecodeError) as error:
        raise ConfigError(f".agent/config.toml: {error}; fix the file, then save the rule again") from error


def _allow_array(document: tomlkit.TOMLDocument) -> tomlkit.items.Array:
    permissions = document.get("permissions")
    if permissions is None:
        permissions = tomlkit.table()
        document["permissions"] = permissions
    if not isinstance(permissions, dict):
        raise ConfigError(".agent/config.toml: [permissions] must be a table")
    allow = permissions.get("allow")
    if allow is None:
        allow = tomlkit.array()
        allow.multiline(True)
        permissions["allow"] = allow
    if not isinstance(allow, tomlkit.items.Array):
        raise ConfigError(".agent/config.toml: permissions.allow must be a list of rules")
    return allow


def save_rule(project: Project, rule: str) -> bool:
    """Add `rule` to the project's allow list; False when it was already there."""
    document = _load(project.config_path)
    allow = _allow_array(document)
    if rule in [str(item) for item in allow]:
        return False
    allow.append(rule)
    project.config_path.parent.mkdir(parents=True, exist_ok=True)
    project.config_path.write_text(tomlkit.dumps(document), encoding="utf-8")
    return True


def remove_rule(project: Project, rule: str) -> bool:
    """Remove `rule` from the project's allow list; False when it was not there."""
    if not project.config_path.exists():
        return False
    document = _load(project.config_path)
    allow = _allow_array(document)
    kept = [str(item) for item in allow if str(item) != rule]
    if len(kept) == len(allow):
        return False
    while len(allow):
        allow.pop()
    for item in kept:
        allow.append(item)
    project.config_path.write_text(tomlkit.dumps(document), encoding="utf-8")
    return True
