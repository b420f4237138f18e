"""Helpers (no tests) shared by the catalog tests: a sandbox and catalog on a repo, tool sources, git inspection, waiting for a condition."""

from __future__ import annotations

import asyncio
import textwrap
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from tests.gitrepo import git
from tui_agent.core.catalog.api import Catalog
from tui_agent.core.project import Project
from tui_agent.core.sandbox import Sandbox


@asynccontextmanager
async def started_sandbox(repo: Path, tier: str | None = None) -> AsyncIterator[Sandbox]:
    """A sandbox on `repo` with one warm worker, closed on exit."""
    box = await Sandbox.start(Project.at(repo), tier=tier, warm_workers=1)
    try:
        yield box
    finally:
        await box.aclose()


@asynccontextmanager
async def opened_catalog(repo: Path, sandbox: Sandbox, **options: Any) -> AsyncIterator[Catalog]:
    """A catalog on `repo` over `sandbox` (options go to Catalog.open), closed on exit."""
    catalog = await Catalog.open(Project.at(repo), sandbox, **options)
    try:
        yield catalog
    finally:
        await catalog.aclose()


def tool_source(name: str, body: str = "return 2 * x", *, extra: str = "", test: str = "") -> str:
    source = f'''
def {name}(x: int) -> int:
    """Double a number.

    Args:
        x: the number
    """
    {body}
'''
    if test:
        source += f"\n\ndef test_{name}():\n    {test}\n"
    return textwrap.dedent(extra) + source


def head(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD").strip()


def subjects(repo: Path) -> list[str]:
    return git(repo, "log", "--format=%s").splitlines()


def files_in(repo: Path, rev: str = "HEAD") -> list[str]:
    return git(repo, "ls-tree", "-r", "--name-only", rev).splitlines()


async def wait_for(predicate: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.02)
