"""Protected paths: project files agent code may read but never change, even in a run that may write the project.

Existing ones are bound read-only inside bubblewrap (`.agent/` as a whole, so it cannot be renamed away: a
mount point cannot be renamed). A path that does not exist yet cannot be bound without creating it in the
user's project, so after every run that could write the project, `quarantine.sweep` moves any protected path
that appeared during the run into `.agent/quarantine/` before tuiagent does anything else.
"""

from __future__ import annotations

import os
from pathlib import Path

from tui_agent.core import globs
from tui_agent.core.project import AGENT_DIR, ConfigError, Project
from tui_agent.core.sandbox.leftovers import GIT, GIT_READ_ONLY
from tui_agent.core.versioning.hookspath import hooks_path

PROTECTED_NAMES: tuple[str, ...] = (
    ".git", AGENT_DIR, ".vscode", ".idea", ".envrc", ".mcp.json", ".gitmodules", ".gitconfig",
    ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc", ".zshenv", ".zprofile",
    ".zlogin", ".zlogout", ".kshrc", ".cshrc", ".tcshrc", ".inputrc",
    ".husky", ".pre-commit-config.yaml", "lefthook.yml", ".lefthook.yml",
)
"""Paths relative to the project root, protected whether or not they exist (the last line: hook managers whose
files decide what a git hook runs, outside the sandbox, at the next catalog commit)."""

QUARANTINE = f"{AGENT_DIR}/quarantine"
MAX_GLOB_MATCHES = 500


def user_globs(root: Path) -> tuple[str, ...]:
    """`[sandbox] protected = [...]` from `.agent/config.toml` (a broken config protects nothing more here)."""
    try:
        return Project.at(root).load_settings().protected_globs
    except ConfigError:
        return ()


def glob_matches(root: Path, patterns: tuple[str, ...], limit: int = MAX_GLOB_MATCHES) -> list[str]:
    """Existing project paths matching the user's globs (relative, POSIX; a matching folder, not its contents),
    at most `limit`."""
    return globs.matching_paths(root, patterns, limit=limit)


def protected_paths(root: Path) -> list[str]:
    """Every protected path of the project, relative: the fixed names, the hooks folder, the user's globs."""
    paths = list(PROTECTED_NAMES)
    hooks = hooks_path(root)
    if hooks and hooks not in paths and not hooks.startswith(".git/"):
        paths.append(hooks)
    paths += [match for match in glob_matches(root, user_globs(root)) if match not in paths]
    return paths


def _bindable(root: Path, relative: str) -> bool:
    """Whether the path exists and really lies inside the project (a symlink out of it is left to the sweep).

    Plain `os.path` on strings: this runs for every protected name before every sandboxed run."""
    inside = os.path.join(root, relative)
    if not os.path.exists(inside):
        return False
    real, top = os.path.realpath(inside), str(root)
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)


def read_only_binds(root: Path, *, git_commits: bool = False) -> list[str]:
    """bwrap arguments binding every existing protected path read-only (after the project's writable bind).

    `git_commits` (a run whose writes the harvest filters: an overlay run) leaves the project's `.git` folder
    writable but for its config, hooks and the like (`leftovers.GIT_READ_ONLY`), so that the run can commit."""
    args: list[str] = []
    for relative in protected_paths(root):
        if git_commits and relative == GIT and _git_folder(root):
            args += read_only_binds_in_git(root)
        elif _bindable(root, relative):
            inside = root / relative
            args += ["--ro-bind", str(inside), str(inside)]
    return args


def _git_folder(root: Path) -> bool:
    """The project's `.git` is a real folder inside it (not a file pointing elsewhere, not a symlink)."""
    path = os.path.join(root, GIT)
    return os.path.isdir(path) and not os.path.islink(path)


def read_only_binds_in_git(root: Path) -> list[str]:
    """bwrap arguments binding `.git`'s config, hooks and the like read-only (a `core.hooksPath` in `.git` too)."""
    args: list[str] = []
    hooks = hooks_path(root)
    names = [f"{GIT}/{name}" for name in GIT_READ_ONLY]
    for relative in [*names, *([hooks] if hooks and hooks.startswith(GIT + "/") and hooks not in names else [])]:
        if _bindable(root, relative):
            path = root / relative
            args += ["--ro-bind", str(path), str(path)]
    return args


def layout(root: Path) -> tuple[tuple[str, bool], ...]:
    """Which protected paths are bound: a warm worker started under another layout must not be used."""
    inside_git = tuple((f"{GIT}/{name}", _bindable(root, f"{GIT}/{name}")) for name in GIT_READ_ONLY)
    return (*((relative, _bindable(root, relative)) for relative in protected_paths(root)), *inside_git)


def fixed_names(root: Path) -> list[str]:
    """The fixed protected names and the hooks folder when it lies in the work tree."""
    names = list(PROTECTED_NAMES)
    hooks = hooks_path(root)
    if hooks and not hooks.startswith(".git/") and hooks not in names:
        names.append(hooks)
    return names


def unbound(root: Path) -> dict[str, str | None]:
    """The fixed protected names and the hooks folder a run could create or replace, with what is there now:
    None when absent, the target when a symlink (a bind protects what a link points to, never the link itself)."""
    state: dict[str, str | None] = {}
    for name in fixed_names(root):
        path = os.path.join(root, name)
        if os.path.islink(path):
            state[name] = os.readlink(path)
        elif not os.path.lexists(path):
            state[name] = None
    return state


def matches_protected(root: Path, relative: str) -> str | None:
    """The protected entry `relative` (a project path, POSIX) falls under, or None."""
    for entry in protected_paths(root):
        if relative == entry or relative.startswith(entry + "/"):
            return entry
    for pattern in user_globs(root):
        if globs.matches(relative, [pattern]):
            return pattern
    return None
