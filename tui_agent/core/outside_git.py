"""Which `Project` a folder outside any git repository opens as: a new repository, or used without git (kept outside)."""

from __future__ import annotations

import asyncio
import inspect
import os
from collections.abc import Awaitable, Callable
from pathlib import Path

from tui_agent.core.project import AGENT_DIR, Project

AskInitGit = Callable[[Project], "bool | Awaitable[bool]"]


def has_own_place(root: Path) -> bool:
    """Inside a git work tree, or with a `.agent/` already there: the project keeps its state in `.agent/`."""
    from tui_agent.core.rootfind import repository_top

    if os.path.lexists(root / AGENT_DIR):
        return True
    try:
        return repository_top(root) is not None
    except ValueError:  # a repository git refuses: the catalog says why
        return True


async def project_for(root: str | Path, ask_init_git: AskInitGit | None) -> Project:
    """Ask `ask_init_git` (once) about a folder outside git with no `.agent/`: yes creates the repository now, no
    gives a project whose state is kept outside the folder, so nothing is written to it. Without a question to ask,
    the folder keeps its `.agent/` as before (the library's callers)."""
    project = Project.at(root)
    if ask_init_git is None or await asyncio.to_thread(has_own_place, project.root):
        return project
    answer = ask_init_git(project)
    if inspect.isawaitable(answer):
        answer = await answer
    if not answer:
        return Project.kept_outside(project.root)
    from tui_agent.core.versioning.gitstore import CatalogGit

    await asyncio.to_thread(CatalogGit.init_repo, project.root)
    return project
