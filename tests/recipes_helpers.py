"""Shared helpers for the recipe tests: a real sandbox + catalog + recipe engine on a real git repo, and sample tools."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tui_agent.core.agent.permissions import ApprovalCallback, Permissions, approve_all
from tui_agent.core.catalog.api import Catalog
from tui_agent.core.events import Event, Notice
from tui_agent.core.project import Project
from tui_agent.core.recipes import LoopGuard, RecipeEngine, open_recipes
from tui_agent.core.sandbox import Sandbox

COUNT_LINES = '''
def count_lines(path: str) -> int:
    """Count the lines of a project file.

    Args:
        path: project-relative path
    """
    with open(path, encoding="utf-8") as handle:
        return len(handle.readlines())


def test_count_lines() -> None:
    assert isinstance(count_lines.__doc__, str)
'''

STAMP_FILE = '''
WRITES = True


def stamp_file(path: str) -> str:
    """Append a line to a project file (a formatter-like tool that always changes the file).

    Args:
        path: project-relative path
    """
    with open(path, "a", encoding="utf-8") as handle:
        handle.write("# stamped\\n")
    return path
'''

SHOUT = '''
def shout(text: str) -> str:
    """Upper-case a text.

    Args:
        text: the text
    """
    return text.upper()
'''


@dataclass
class Stack:
    """A project opened the way the runtime opens it, with every event the engine emitted."""

    root: Path
    project: Project
    sandbox: Sandbox
    catalog: Catalog
    engine: RecipeEngine
    events: list[Event] = field(default_factory=list)
    prompts: list[str] = field(default_factory=list)

    def notices(self, fragment: str = "") -> list[str]:
        return [event.message for event in self.events if isinstance(event, Notice) and fragment in event.message]

    def write_recipe(self, name: str, text: str) -> None:
        self.project.recipes_dir.mkdir(parents=True, exist_ok=True)
        self.project.recipe_path(name).write_text(text, encoding="utf-8")


@contextlib.asynccontextmanager
async def open_stack(root: Path, *, tools: dict[str, str] | None = None, recipes: dict[str, str] | None = None,
                     guard: LoopGuard | None = None, tier: str | None = None, approve: ApprovalCallback = approve_all,
                     permission_mode: str = "ask") -> AsyncIterator[Stack]:
    """Real sandbox (the strongest tier available) + catalog + recipe engine, opened like the runtime does
    (`approve` and `permission_mode` make the runtime's Permissions, which approve tools that declare WRITES)."""
    project = Project.at(root)
    sandbox = await Sandbox.start(project, tier=tier)
    catalog = await Catalog.open(project, sandbox)
    for name, source in (tools or {}).items():
        await catalog.save(name, source)
    for name, text in (recipes or {}).items():
        project.recipes_dir.mkdir(parents=True, exist_ok=True)
        project.recipe_path(name).write_text(text, encoding="utf-8")
    prompts: list[str] = []

    async def submit_prompt(text: str) -> None:
        prompts.append(text)

    engine = await open_recipes(project, catalog, submit_prompt=submit_prompt, guard=guard,
                                permissions=Permissions(permission_mode, approve))
    stack = Stack(root, project, sandbox, catalog, engine, prompts=prompts)
    engine.add_listener(stack.events.append)
    try:
        yield stack
    finally:
        await engine.aclose()
        await catalog.aclose()
        await sandbox.aclose()


@contextlib.asynccontextmanager
async def watching(stack: Stack, timeout: float = 10.0) -> AsyncIterator[None]:
    """Run the engine's watcher until the block ends; waits until the OS watch is live."""
    task = asyncio.create_task(stack.engine.watch())
    try:
        await asyncio.wait_for(stack.engine.watcher.ready.wait(), timeout)
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def wait_for(predicate: Callable[[], Any], timeout: float = 10.0, interval: float = 0.05) -> Any:
    """Poll until `predicate()` is truthy; fails the test with a clear message on timeout."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        await asyncio.sleep(interval)
    raise AssertionError(f"timed out after {timeout} s waiting for {getattr(predicate, '__name__', predicate)}")


def recipe_text(trigger: str, action: str, *, description: str = "a recipe", extra: str = "") -> str:
    return f'description = "{description}"\n{extra}\n[trigger]\n{trigger}\n\n[action]\n{action}\n'
