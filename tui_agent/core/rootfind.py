"""Which folder is the project: the nearest `.agent/` up to the repository root, else the repository root; with a precise refusal for a symlinked `.agent`, a repository git refuses, or no repository at all."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from tui_agent.core.errors import TuiAgentError
from tui_agent.core.project import AGENT_DIR
from tui_agent.core.versioning.discovery import ask_git
from tui_agent.core.versioning.gitdoor import layout_problem

class ProjectRootError(TuiAgentError, ValueError):
    """The folder cannot be used as a project; the message says why and how to fix it."""


@dataclass(frozen=True)
class Located:
    """The project root found from a starting folder, and warnings to show (never fatal)."""

    root: Path
    in_repository: bool
    warnings: list[str] = field(default_factory=list)


def repository_top(start: Path) -> Path | None:
    """The work tree root holding `start`, None outside any repository; ProjectRootError when git refuses it."""
    try:
        done = ask_git(start, "rev-parse", "--show-toplevel", "--absolute-git-dir")  # one git start for both
    except subprocess.TimeoutExpired as error:
        raise ProjectRootError(f"{no_answer(error, start)}, so tuiagent cannot tell whether {start} is in a repository "
                               "(a stuck filesystem, or a config include or hook git waits on?). Fix what git waits "
                               f"for, or give it longer: TUIAGENT_GIT_TIMEOUT_S=SECONDS.") from None
    except OSError:
        return None
    if done.returncode == 0 and done.stdout.strip():
        top, git_dir = top_and_git_dir(start, done.stdout)
        problem = layout_problem(top, git_dir, start)
        if problem is not None:
            raise ProjectRootError(problem)
        return top
    if "dubious ownership" in done.stderr:
        where = done.stderr.split("repository at", 1)[-1].split("\n", 1)[0].strip(" '") or str(start)
        raise ProjectRootError(
            f"git refuses the repository at {where}: it belongs to another user (git's \"dubious ownership\" check), "
            f"so tuiagent cannot version the catalog there. If you trust it: git config --global --add safe.directory {where}")
    fatal = next((line for line in done.stderr.splitlines() if line.startswith("fatal:")), "")
    if fatal and "not a git repository" not in fatal:  # a malformed config, a `.git` file that is not a gitfile
        raise ProjectRootError(f"git cannot use the repository holding {start}: {fatal.removeprefix('fatal: ')}. "
                               "Nothing was changed; fix it (or move the broken .git aside) and start again.")
    return None


def top_and_git_dir(start: Path, answer: str) -> tuple[Path, Path]:
    """The work tree root and git folder from rev-parse's two lines; asked one at a time when a path has a newline."""
    lines = answer.removesuffix("\n").split("\n")
    if len(lines) == 2 and all(lines):
        return Path(lines[0]), Path(lines[1])
    top = Path(ask_git(start, "rev-parse", "--show-toplevel").stdout.removesuffix("\n"))
    return top, Path(ask_git(start, "rev-parse", "--absolute-git-dir").stdout.removesuffix("\n") or top / ".git")


def no_answer(error: subprocess.TimeoutExpired, folder: Path) -> str:
    """What timed out: the git command, where, and its bound."""
    command = " ".join(error.cmd) if isinstance(error.cmd, list) else str(error.cmd)
    return f"`{command}` in {folder} did not answer within {error.timeout:g} s"


def nearest_agent_dir(start: Path, stop: Path | None) -> Path | None:
    """The nearest folder from `start` up to `stop` (inclusive; the filesystem root without one) that has `.agent/`."""
    for folder in (start, *start.parents):
        if os.path.lexists(folder / AGENT_DIR):
            return folder
        if stop is not None and folder == stop:
            return None
    return None


def symlink_problem(root: Path) -> str | None:
    """A precise refusal when `.agent`, `.agent/tools` or `.agent/recipes` is a symlink."""
    for relative in (AGENT_DIR, f"{AGENT_DIR}/tools", f"{AGENT_DIR}/recipes"):
        path = root / relative
        if path.is_symlink():
            return (f"{path} is a symlink (to {os.readlink(path)}): tuiagent needs a real folder there (the sandbox "
                    f"protects it and git commits it by path). Replace the link with the folder it points to.")
    return None


def ignored_warning(root: Path) -> str | None:
    """A warning when the user's .gitignore ignores `.agent/` (commits still work; `git add` would skip it)."""
    try:
        done = ask_git(root, "check-ignore", "-v", "--no-index", f"{AGENT_DIR}/tools/x.py")
    except subprocess.TimeoutExpired as error:
        return (f"{no_answer(error, root)}, so whether .agent/ is ignored by git is not known "
                "(TUIAGENT_GIT_TIMEOUT_S=SECONDS gives git longer).")
    except OSError:
        return None
    if done.returncode != 0 or not done.stdout.strip():
        return None
    source, _, _ = done.stdout.strip().partition("\t")
    return (f".agent/ is ignored by git ({source}): tuiagent still commits the catalog, but `git status` and `git add` "
            f"will not show it. Remove that rule or add `!.agent/` after it.")


def locate(start: Path) -> Located:
    """The project for `start`: the nearest `.agent/` within the repository, else the repository root."""
    start = Path(os.path.abspath(start))
    if not start.is_dir():
        raise ProjectRootError(f"{start} is not a folder")
    top = repository_top(start)
    found = nearest_agent_dir(start, top) or top
    root = found if found is not None else start
    problem = symlink_problem(root)
    if problem is not None:
        raise ProjectRootError(problem)
    warnings = [w for w in [ignored_warning(root) if top is not None else None] if w]
    return Located(root, top is not None, warnings)


def outside_repository_message(root: Path) -> str:
    return (f"{root} is not inside a git repository and has no {AGENT_DIR}/ folder; nothing was created. "
            "tuiagent keeps its tool catalog in .agent/ and versions it with git: run `git init` there first, "
            "or pass --init-git to let tuiagent create the repository.")
