"""RecipeBook: the recipes of `.agent/recipes/`, each with its status, its live (last good) version and its problems."""

from __future__ import annotations

from collections.abc import Callable

from tui_agent.core import projectfs
from tui_agent.core.catalog.errors import PipelineError
from tui_agent.core.project import Project
from tui_agent.core.recipes.model import Recipe, RecipeRecord, RecipeStatus
from tui_agent.core.recipes.recipefile import parse_recipe
from tui_agent.core.recipes.runlog import RunStats

ToolStatus = Callable[[str], "str | None"]
"""Status of a catalog tool by name ("ok", "broken", "drifted", "unused"), None when there is no such tool."""

CommittedSource = Callable[[str], "bytes | None"]
"""The last committed bytes of a recipe file by name, None when git has none."""


class RecipeBook:
    """Loads recipe files one by one: a broken file is recorded as broken and never stops the others from loading."""

    def __init__(self, project: Project, *, tool_status: ToolStatus, committed_source: CommittedSource | None = None) -> None:
        self.project = project
        self.tool_status = tool_status
        self.committed_source = committed_source
        self._live: dict[str, Recipe] = {}
        self._errors: dict[str, PipelineError] = {}
        self._on_disk: dict[str, str] = {}
        self._commits: dict[str, str | None] = {}
        self._stats: dict[str, RunStats] = {}

    def names_on_disk(self) -> list[str]:
        if not self.project.recipes_dir.is_dir():
            return []
        return sorted(path.stem for path in self.project.recipes_dir.glob("*.toml") if path.is_file())

    def load(self) -> list[str]:
        """Read every recipe file; returns the names whose record changed."""
        names = set(self.names_on_disk()) | set(self._live) | set(self._errors)
        return [name for name in sorted(names) if self.refresh(name)]

    def refresh(self, name: str) -> bool:
        """Re-read one recipe file; returns whether what the book knows about it changed."""
        before = self.get(name)
        path = self.project.recipe_path(name)
        if not path.is_file():
            self._live.pop(name, None)
            self._errors.pop(name, None)
            self._on_disk.pop(name, None)
            return before is not None
        try:
            raw = projectfs.read_bytes(path)  # a link in .agent/ is refused, named in the error
        except OSError as exc:
            self._errors[name] = PipelineError("read", f"cannot read {self.project.relative(path)}: {exc}")
            return before != self.get(name)
        try:
            recipe = parse_recipe(name, raw)
        except PipelineError as error:
            self._errors[name] = error
            self._on_disk.pop(name, None)
            if name not in self._live:
                fallback = self._committed_recipe(name)
                if fallback is not None:
                    self._live[name] = fallback
        else:
            self._live[name] = recipe
            self._errors.pop(name, None)
            self._on_disk[name] = recipe.source_sha
        return before != self.get(name)

    def _committed_recipe(self, name: str) -> Recipe | None:
        if self.committed_source is None:
            return None
        try:
            raw = self.committed_source(name)
            return parse_recipe(name, raw) if raw is not None else None
        except (PipelineError, OSError, ValueError):
            return None

    def accept(self, recipe: Recipe) -> None:
        """Register a recipe the pipeline just validated and wrote."""
        self._live[recipe.name] = recipe
        self._errors.pop(recipe.name, None)
        self._on_disk[recipe.name] = recipe.source_sha

    def forget(self, name: str) -> None:
        self._live.pop(name, None)
        self._errors.pop(name, None)
        self._on_disk.pop(name, None)

    def disk_sha(self, name: str) -> str | None:
        """The sha of the valid content the book last saw on disk for `name`."""
        return self._on_disk.get(name)

    def set_commit(self, name: str, commit: str | None) -> None:
        self._commits[name] = commit

    def set_stats(self, stats: dict[str, RunStats]) -> None:
        self._stats = dict(stats)

    def problems(self, recipe: Recipe) -> tuple[str, ...]:
        """Why the recipe cannot run now: each required tool that is missing or broken."""
        found: list[str] = []
        for tool in recipe.needed_tools:
            status = self.tool_status(tool)
            if status is None:
                found.append(f"requires tool {tool}, which does not exist")
            elif status == "broken":
                found.append(f"requires tool {tool}, which is broken")
        return tuple(found)

    def get(self, name: str) -> RecipeRecord | None:
        recipe = self._live.get(name)
        error = self._errors.get(name)
        if recipe is None and error is None:
            return None
        problems = self.problems(recipe) if recipe is not None else ()
        status: RecipeStatus
        if error is not None or problems:
            status = "broken"
        elif recipe is not None and not recipe.enabled:
            status = "disabled"
        else:
            status = "ok"
        stats = self._stats.get(name, RunStats())
        return RecipeRecord(
            name=name,
            status=status,
            recipe=recipe,
            error=error,
            problems=problems,
            commit=self._commits.get(name),
            runs=stats.runs,
            failures=stats.failures,
            last_run=stats.last_run,
        )

    def records(self) -> list[RecipeRecord]:
        names = sorted(set(self._live) | set(self._errors))
        return [record for record in (self.get(name) for name in names) if record is not None]

    def runnable(self, trigger: str) -> list[Recipe]:
        """Recipes that fire on `trigger` now, in run order: `priority` ascending, then name."""
        ready = [
            record.recipe
            for record in self.records()
            if record.recipe is not None and record.runnable and record.recipe.trigger.on == trigger
        ]
        return sorted(ready, key=lambda recipe: recipe.order)
