"""Live drift: project file changes re-run the tests of the tools that depend on them; new failures reach recipes."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from typing import Any

from tui_agent.core.catalog.api import Catalog
from tui_agent.core.errors import PROJECT_FAILURES
from tui_agent.core.tending.repair import repair_prompt

log = logging.getLogger(__name__)


class DriftWatch:
    """Fed by the project watcher's file changes; one re-check runs at a time and another follows if files changed meanwhile."""

    def __init__(self, catalog: Catalog, recipes: Any = None) -> None:
        self.catalog = catalog
        self.recipes = recipes  # a RecipeEngine, for tool_drifted recipes (None: no recipes)
        self._task: asyncio.Task[None] | None = None
        self._again = False

    def files_changed(self, paths: Iterable[str]) -> None:
        if self._task is not None and not self._task.done():
            self._again = True
            return
        self._task = asyncio.get_running_loop().create_task(self._run(), name="drift-recheck")

    async def _run(self) -> None:
        while True:
            self._again = False
            try:
                reports = await self.catalog.recheck_drift()
            except PROJECT_FAILURES as error:  # a failed re-check leaves the last known status; the next change tries again
                log.warning("drift re-check failed: %s", error)
                return
            for report in reports:
                record = self.catalog.get(report.name)
                if report.tests_pass is False and record is not None and self.recipes is not None:
                    self.recipes.tool_drifted(report.name, repair_prompt(record, report, self.catalog.source(report.name) or ""))
            if not self._again:
                return

    async def idle(self) -> None:
        """Wait for the running re-check (tests use it; so does closing)."""
        while self._task is not None and not self._task.done():
            await asyncio.gather(self._task, return_exceptions=True)

    async def aclose(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
