"""The project watcher for recipes (watchfiles): changed project files feed file_changed triggers, edited recipe files reload."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from pathlib import Path

import watchfiles

from tui_agent.core.project import Project

PROBE_NAME = ".recipes-watch-probe"
IGNORED_DIRS = frozenset(
    {".git", ".hg", ".svn", "__pycache__", ".venv", "venv", "node_modules", ".mypy_cache", ".pytest_cache",
     ".ruff_cache", ".tox", ".nox", ".idea", ".hypothesis", ".eggs"}
)
IGNORED_SUFFIXES = (".swp", ".swx", ".swo", "~", ".tmp", ".pyc")

OnFiles = Callable[[list[str]], object]
OnRecipes = Callable[[set[str]], Awaitable[None]]


class ProjectWatcher:
    """Runs until cancelled. `.git/`, `.agent/` (except recipe files) and tool caches are never reported; `ready` is
    set once the OS watch is live, proved by seeing a probe file written in `.agent/cache/` (git-ignored)."""

    def __init__(self, project: Project, on_files: OnFiles, on_recipes: OnRecipes, *, step_ms: int = 30) -> None:
        self.project = project
        self.on_files = on_files
        self.on_recipes = on_recipes
        self.step_ms = step_ms
        self.ready = asyncio.Event()
        self.probe = project.cache_dir / PROBE_NAME

    def classify(self, raw_path: str) -> tuple[str, str] | None:
        """("file", rel) for a project file, ("recipe", name) for a recipe file, ("probe", "") or None to ignore."""
        path = Path(raw_path)
        if path == self.probe:
            return ("probe", "")
        try:
            rel = path.relative_to(self.project.root).as_posix()
        except ValueError:
            rel = Path(os.path.relpath(os.path.realpath(raw_path), self.project.root)).as_posix()
            if rel.startswith("../"):
                return None
        parts = rel.split("/")
        if parts[0] == ".agent":
            if len(parts) == 3 and parts[1] == "recipes" and parts[2].endswith(".toml") and not parts[2].startswith("."):
                return ("recipe", parts[2][: -len(".toml")])
            return None
        if any(part in IGNORED_DIRS for part in parts[:-1]) or parts[-1].endswith(IGNORED_SUFFIXES):
            return None
        return ("file", rel)

    def _watch_filter(self, _change: watchfiles.Change, path: str) -> bool:
        return self.classify(path) is not None

    async def _announce(self) -> None:
        self.probe.parent.mkdir(parents=True, exist_ok=True)
        while not self.ready.is_set():
            self.probe.write_text("probe\n")
            await asyncio.sleep(0.05)
        self.probe.unlink(missing_ok=True)

    async def run(self) -> None:
        self.project.recipes_dir.mkdir(parents=True, exist_ok=True)
        announcer = asyncio.create_task(self._announce())
        try:
            async for changes in watchfiles.awatch(self.project.root, watch_filter=self._watch_filter,
                                                   debounce=1600, step=self.step_ms):
                files: set[str] = set()
                recipes: set[str] = set()
                for _change, raw in changes:
                    kind = self.classify(raw)
                    if kind is None:
                        continue
                    if kind[0] == "probe":
                        self.ready.set()
                    elif kind[0] == "recipe":
                        recipes.add(kind[1])
                    else:
                        files.add(kind[1])
                if recipes:
                    await self.on_recipes(recipes)
                if files:
                    self.on_files(sorted(files))
        finally:
            announcer.cancel()
            self.probe.unlink(missing_ok=True)
