"""Allow rules saved on disk, edited without losing the rest of the file: the person's own in the git-ignored
`.agent/config.local.toml` ("always allow for this project"), the shared ones in the committed `.agent/config.toml`."""

from __future__ import annotations

import tomllib
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING

from tui_agent.core import projectfs
from tui_agent.core.project import ConfigError, Project
from tui_agent.core.sharedfile import folder_locked, replace_text

if TYPE_CHECKING:  # tomlkit (which keeps comments and layout) loads when a rule is saved or removed, not to read them
    import tomlkit


def _load(path: Path) -> tomlkit.TOMLDocument:
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    try:
        text = projectfs.read_or_none(path)  # a link in .agent/ is refused (LinkRefused), never read or written through
        return tomlkit.parse(text.decode("utf-8")) if text is not None else tomlkit.document()
    except (TOMLKitError, UnicodeDecodeError) as error:
        raise ConfigError(f".agent/{path.name}: {error}; fix the file, then save the rule again") from error


def _allow_array(document: tomlkit.TOMLDocument, name: str) -> tomlkit.items.Array:
    import tomlkit

    permissions = document.get("permissions")
    if permissions is None:
        permissions = tomlkit.table()
        document["permissions"] = permissions
    if not isinstance(permissions, dict):
        raise ConfigError(f".agent/{name}: [permissions] must be a table")
    allow = permissions.get("allow")
    if allow is None:
        allow = tomlkit.array()
        allow.multiline(True)
        permissions["allow"] = allow
    if not isinstance(allow, tomlkit.items.Array):
        raise ConfigError(f".agent/{name}: permissions.allow must be a list of rules")
    return allow


def _path(project: Project, local: bool) -> Path:
    return project.local_config_path if local else project.config_path


def save_rule(project: Project, rule: str, *, local: bool = True) -> bool:
    """Add `rule` to the person's local allow list (or, `local=False`, the committed one); False when already there."""
    path = _path(project, local)
    with _locked(path):
        document = _load(path)
        allow = _allow_array(document, path.name)
        if rule in [str(item) for item in allow]:
            return False
        allow.append(rule)
        projectfs.make_dirs(path.parent)
        if local:
            exclude_locally(project)
        projectfs.write_atomic(path, document.as_string().encode("utf-8"))
    return True


def remove_rule(project: Project, rule: str, *, local: bool = True) -> bool:
    """Remove `rule` from the local (or committed) allow list; False when it was not there."""
    path = _path(project, local)
    with _locked(path):
        if not path.exists():
            return False
        document = _load(path)
        allow = _allow_array(document, path.name)
        kept = [str(item) for item in allow if str(item) != rule]
        if len(kept) == len(allow):
            return False
        while len(allow):
            allow.pop()
        for item in kept:
            allow.append(item)
        projectfs.write_atomic(path, document.as_string().encode("utf-8"))
    return True


def _locked(path: Path) -> AbstractContextManager[None]:
    """Another tuiagent of this project saving a rule at the same time keeps its rule: one writer at a time (an
    flock on `.agent/` itself, so no lock file shows in `git status`)."""
    return folder_locked(path.parent)


def local_rules(project: Project) -> tuple[list[str], list[str]]:
    """The rules of `.agent/config.local.toml` and the problems reading it (a broken file grants nothing)."""
    path = project.local_config_path
    if not path.is_file():
        return [], []
    try:
        data = tomllib.loads(projectfs.read_text(path))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, ValueError, RecursionError, MemoryError) as error:
        return [], [f".agent/{path.name}: {error}; its allow rules are ignored until it is fixed"]
    allow = data.get("permissions", {}).get("allow", []) if isinstance(data.get("permissions"), dict) else []
    if not isinstance(allow, list) or not all(isinstance(item, str) for item in allow):
        return [], [f".agent/{path.name}: permissions.allow must be a list of rules; ignored"]
    return list(allow), []


def exclude_locally(project: Project) -> None:
    """Add the local config to `.git/info/exclude` too (an older `.agent/.gitignore` does not name it)."""
    info = project.root / ".git" / "info"
    if not (project.root / ".git").is_dir():
        return
    line = f"/{project.local_config_path.relative_to(project.root).as_posix()}"
    exclude = info / "exclude"
    try:
        text = exclude.read_text(encoding="utf-8") if exclude.is_file() else ""
        if line not in text.splitlines():
            info.mkdir(parents=True, exist_ok=True)
            replace_text(exclude, text + ("" if not text or text.endswith("\n") else "\n") + line + "\n")
    except OSError:
        pass  # the .agent/.gitignore line still ignores it in new projects
