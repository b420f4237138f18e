"""Protected paths: project files agent code may read but never change, even in a run that may write the project.

Existing ones are bound read-only inside bubblewrap (`.agent/` as a whole, so it cannot be renamed away: a
mount point cannot be renamed). A path that does not exist yet cannot be bound without creating it in the
user's project, so after every run that could write the project, `sweep_created` moves any protected path
that appeared during the run into `.agent/quarantine/` before tuiagent does anything else.
"""

from __future__ import annotations

import fnmatch
import os
import shutil
import time
from pathlib import Path

from tui_agent.core.project import AGENT_DIR, ConfigError, Project
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


def glob_matches(root: Path, patterns: tuple[str, ...]) -> list[str]:
    """Existing project paths matching the user's globs (relative, POSIX), at most MAX_GLOB_MATCHES."""
    found: list[str] = []
    for pattern in patterns:
        clean = pattern.strip().lstrip("/")
        if not clean or ".." in Path(clean).parts:
            continue
        for match in sorted(root.glob(clean)):
            relative = match.relative_to(root).as_posix()
            if relative not in found:
                found.append(relative)
            if len(found) >= MAX_GLOB_MATCHES:
                return found
    return found


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


def read_only_binds(root: Path) -> list[str]:
    """bwrap arguments binding every existing protected path read-only (after the project's writable bind)."""
    args: list[str] = []
    for relative in protected_paths(root):
        if _bindable(root, relative):
            inside = root / relative
            args += ["--ro-bind", str(inside), str(inside)]
    return args


def layout(root: Path) -> tuple[tuple[str, bool], ...]:
    """Which protected paths are bound: a warm worker started under another layout must not be used."""
    return tuple((relative, _bindable(root, relative)) for relative in protected_paths(root))


def unbound(root: Path) -> dict[str, str | None]:
    """The fixed protected names and the hooks folder that cannot be bound (absent, or a symlink out of the
    project), with what is there now (None, or the link's target): what a run could create or replace."""
    names = list(PROTECTED_NAMES)
    hooks = hooks_path(root)
    if hooks and not hooks.startswith(".git/"):
        names.append(hooks)
    state: dict[str, str | None] = {}
    for name in names:
        path = os.path.join(root, name)
        if os.path.islink(path) and not _bindable(root, name):
            state[name] = os.readlink(path)
        elif not os.path.lexists(path):
            state[name] = None
    return state


def sweep_created(root: Path, before: dict[str, str | None]) -> list[str]:
    """Move protected paths a run created or replaced into `.agent/quarantine/<time>/` (a replaced symlink is put
    back); one note per path moved."""
    notes: list[str] = []
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for relative, link in before.items():
        now = _link_or_presence(os.path.join(root, relative))
        if now == link:
            continue
        path = root / relative
        target = root / QUARANTINE / stamp / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            if now is not None:
                shutil.move(str(path), str(target))
            if link is not None:
                os.symlink(link, path)
            verb = "created" if link is None else "replaced"
            notes.append(f"agent code {verb} the protected path {relative}; moved to {target.relative_to(root)}")
        except OSError as exc:
            notes.append(f"agent code changed the protected path {relative} and it could not be moved away: {exc}")
    return notes


def _link_or_presence(path: str) -> str | None:
    """A symbolic link's target, "" for anything else that is there, None when nothing is."""
    try:
        return os.readlink(path)
    except OSError:
        return "" if os.path.lexists(path) else None


def matches_protected(root: Path, relative: str) -> str | None:
    """The protected entry `relative` (a project path, POSIX) falls under, or None."""
    for entry in protected_paths(root):
        if relative == entry or relative.startswith(entry + "/"):
            return entry
    for pattern in user_globs(root):
        if fnmatch.fnmatchcase(relative, pattern.strip().lstrip("/")):
            return pattern
    return None
