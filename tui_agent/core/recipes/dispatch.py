"""The recipe queue: debounced file-change batches and queued trigger jobs, released in a defined order to one runner."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from tui_agent.core.recipes.model import Recipe, RecipeRun


@dataclass
class Job:
    """Recipes to run one after the other for one trigger, with what the trigger provides (`paths`, `args`, `name`)."""

    recipes: list[Recipe]
    trigger: str
    context: dict[str, Any]
    done: asyncio.Future[list[RecipeRun]] | None = None


@dataclass
class _Batch:
    recipe: Recipe
    paths: set[str] = field(default_factory=set)
    deadline: float = 0.0


RunJob = Callable[[Job], Awaitable[list[RecipeRun]]]


class Dispatcher:
    """Runs jobs one at a time. File changes wait `debounce_ms` of quiet per recipe; a due batch is held while a
    recipe ordered before it (priority, then name) still has a pending batch, so one event's recipes run in order."""

    def __init__(self, run_job: RunJob) -> None:
        self._run_job = run_job
        self._batches: dict[str, _Batch] = {}
        self._jobs: deque[Job] = deque()
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._running = False

    def start(self) -> None:
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._loop(), name="recipes-dispatch")

    async def aclose(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:  # the cancellation we just asked for
                pass
        for job in self._jobs:
            if job.done is not None and not job.done.done():
                job.done.cancel()
        self._jobs.clear()
        self._batches.clear()

    def add_changes(self, recipe: Recipe, paths: list[str]) -> None:
        """Queue changed paths for a file_changed recipe; its quiet period restarts."""
        loop = asyncio.get_running_loop()
        batch = self._batches.get(recipe.name)
        if batch is None:
            batch = self._batches[recipe.name] = _Batch(recipe)
        batch.recipe = recipe
        batch.paths.update(paths)
        batch.deadline = loop.time() + recipe.trigger.debounce_ms / 1000
        self.start()
        self._wake.set()

    def drop(self, name: str) -> None:
        self._batches.pop(name, None)

    def submit(self, job: Job) -> asyncio.Future[list[RecipeRun]]:
        job.done = asyncio.get_running_loop().create_future()
        self._jobs.append(job)
        self.start()
        self._wake.set()
        return job.done

    @property
    def busy(self) -> bool:
        return bool(self._batches or self._jobs or self._running)

    async def idle(self, poll_s: float = 0.02) -> None:
        """Wait until nothing is pending or running."""
        while self.busy:
            await asyncio.sleep(poll_s)

    def _release_due(self, now: float) -> None:
        for batch in sorted(self._batches.values(), key=lambda item: item.recipe.order):
            if batch.deadline > now:
                break
            del self._batches[batch.recipe.name]
            self._jobs.append(Job([batch.recipe], "file_changed", {"paths": sorted(batch.paths)}))

    async def _loop(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            self._release_due(loop.time())
            if self._jobs:
                job = self._jobs.popleft()
                self._running = True
                try:
                    runs = await self._run_job(job)
                except Exception as exc:  # the runner reports its own errors; this keeps the queue alive
                    if job.done is not None and not job.done.done():
                        job.done.set_exception(exc)
                else:
                    if job.done is not None and not job.done.done():
                        job.done.set_result(runs)
                finally:
                    self._running = False
                continue
            timeout = None
            if self._batches:
                first = min(self._batches.values(), key=lambda item: item.recipe.order)
                timeout = max(0.0, first.deadline - loop.time())
            self._wake.clear()
            try:
                await asyncio.wait_for(self._wake.wait(), timeout)
            except TimeoutError:  # the earliest debounce deadline came: flush below
                pass
