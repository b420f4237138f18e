"""Path confinement for the built-in file tools: real paths resolved, anything leading out of the project refused."""

from __future__ import annotations

import os
from pathlib import Path

from tui_agent.core import projectfs
from tui_agent.core.errors import TuiAgentError
from tui_agent.core.project import AGENT_DIR


class PathRefused(TuiAgentError):
    """The path leads outside the project (directly, through `..`, or through a symlink), or into a protected area."""


def confine(root: Path, path: str) -> Path:
    """The real path of `path` (relative to the project root, or absolute) when it stays inside the project."""
    if not isinstance(path, str) or not path.strip():
        raise PathRefused("the path is empty")
    if "\x00" in path:
        raise PathRefused("the path contains a NUL byte")
    real_root = Path(os.path.realpath(root))
    candidate = Path(os.path.expanduser(path)) if path.startswith("~") else Path(path)
    if not candidate.is_absolute():
        candidate = real_root / candidate
    real = Path(os.path.realpath(candidate))
    if real != real_root and not real.is_relative_to(real_root):
        lexical = Path(os.path.normpath(candidate))
        through_link = lexical == real_root or lexical.is_relative_to(real_root)
        why = "a symlink on the way leads to" if through_link else "it resolves to"
        raise PathRefused(f"refused: {path!r} is outside the project ({why} {real}); only paths inside {real_root} are allowed")
    try:
        projectfs.beneath(real_root, candidate)  # a link inside .agent/ is never followed, even to the project
    except projectfs.LinkRefused as refused:
        raise PathRefused(str(refused)) from None
    return real


def relative_name(root: Path, real: Path) -> str:
    real_root = Path(os.path.realpath(root))
    relative = real.relative_to(real_root).as_posix()
    return relative or "."


def refuse_git_internals(root: Path, real: Path) -> None:
    name = relative_name(root, real)
    if name == ".git" or name.startswith(".git/"):
        raise PathRefused(f"refused: {name} is git's own storage; use git through run_shell instead")


def agent_area(root: Path, real: Path) -> str | None:
    """Which part of `.agent/` the path is in ("tools", "recipes", "config", "state", "other"), or None outside it."""
    name = relative_name(root, real)
    if name != AGENT_DIR and not name.startswith(AGENT_DIR + "/"):
        return None
    inner = name[len(AGENT_DIR) + 1 :]
    top = inner.split("/", 1)[0]
    if top == "tools":
        return "tools"
    if top == "recipes":
        return "recipes"
    if inner in ("config.toml", ".gitignore"):
        return "config"
    if top in ("sessions", "runs", "cache", "quarantine") or top.startswith("state.db"):
        return "state"
    return "other"
