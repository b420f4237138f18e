"""Where a sandboxed run executes: a fresh worker per run, pre-started by `WarmPool` (a batch's calls each fork inside
their run's worker)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from tui_agent.core.project import Project
from tui_agent.core.sandbox.launch import Launch, project_layout
from tui_agent.core.sandbox.policy import TIER_BUBBLEWRAP, Outcome, RunWrites, SandboxBridge, SandboxPolicy
from tui_agent.core.sandbox.process import OutputListener, Worker
from tui_agent.core.sandbox.protected import LowerState
from tui_agent.core.sandbox.toolchain import Toolchain
from tui_agent.core.sandbox.writable_runs import MOUNT_FAILED, PER_CALL_ONLY, WritableRuns

Spawn = Callable[[Launch], Awaitable[Worker]]
IDLE_RELEASE_S = 2.0
"""Workers a prewarm asked for beyond what the pool keeps are closed once no worker was taken for this long (the
workers a cold open started are released once it is done)."""
READ_ONLY_BEFORE_USE = 1
"""Read-only workers kept waiting before any run used one (the pool's size after)."""


class WarmPool:
    """Pre-started workers by `Launch`, for the kinds `kinds()` names (they can change while tuiagent runs: the overlay
    may fail): `size` of each kind a run used; once `prestarted`, `size` of each writable kind and READ_ONLY_BEFORE_USE
    of a read-only one before any run used it; `prewarm` asks for more of a kind for a while."""

    def __init__(self, root: Path, size: int, spawn: Spawn, kinds: Callable[[], tuple[Launch, ...]]) -> None:
        self.root = root
        self.size = size
        self._spawn = spawn
        self._kinds = kinds
        self._workers: list[Worker] = []
        self.prestarted = False
        """Set once the sandbox pre-starts workers (before, only what runs used is kept: `tuiagent -p` starts what a
        call needs, when it needs it)."""
        self._used: set[Launch] = set()
        self._asked: dict[Launch, int] = {}
        """How many workers of a kind a prewarm asked for, until no worker was taken for IDLE_RELEASE_S."""
        self._taken = 0.0
        """When a worker was last taken (or a prewarm asked for some)."""
        self._trim_handle: asyncio.TimerHandle | None = None
        self._refill: asyncio.Task[None] | None = None
        self._discarding: set[asyncio.Task[None]] = set()
        """Workers being closed in the background (stale, or no longer wanted): closing the pool waits for them."""
        self._closed = False

    async def acquire(self, launch: Launch) -> Worker:
        """A waiting worker started as `launch` under the project's current layout, or a new one (network runs and
        runs with the virtualenv writable always get a new one)."""
        if launch.network or launch.venv_writable:
            return await self._spawn(launch)
        self._used.add(launch)
        self._taken = time.monotonic()
        layout = project_layout(self.root, launch)
        if launch in self._asked:  # runs go at once (a cold open's batches): the next one's worker boots meanwhile
            self.schedule_refill()
        for candidate in [worker for worker in self._workers if worker.launch == launch]:
            self._workers.remove(candidate)
            if candidate.alive and candidate.layout == layout:
                return candidate
            self._discard_later(candidate)
        return await self._spawn(launch)

    def wanted(self, launch: Launch) -> int:
        """How many workers of `launch` are kept waiting."""
        if launch in self._used or (self.prestarted and launch.project_writable):
            kept = self.size
        else:
            kept = min(READ_ONLY_BEFORE_USE, self.size) if self.prestarted else 0
        return max(kept, self._asked.get(launch, 0))

    def waiting(self, launch: Launch) -> list[Worker]:
        """The workers of `launch` ready or booting, not taken yet."""
        return [worker for worker in self._workers if worker.launch == launch]

    async def fill(self) -> None:
        kinds = self._kinds()
        for stale in [worker for worker in self._workers if worker.launch not in kinds]:
            self._workers.remove(stale)
            self._discard_later(stale)
        for launch in kinds:
            while not self._closed and len(self.waiting(launch)) < self.wanted(launch):
                self._workers.append(await self._spawn(launch))

    def schedule_refill(self) -> None:
        if self._closed or (self._refill is not None and not self._refill.done()):
            return
        self._refill = asyncio.get_running_loop().create_task(self.fill())

    def prewarm(self, launch: Launch, count: int) -> None:
        """Have `count` workers of `launch` ready or booting now (runs about to go at once: a cold open's batches);
        those beyond what the pool keeps are closed once none was taken for IDLE_RELEASE_S."""
        if self._closed:
            return
        self._asked[launch] = max(count, self._asked.get(launch, 0))
        self._taken = time.monotonic()
        if self._trim_handle is None:
            self._trim_handle = asyncio.get_running_loop().call_later(IDLE_RELEASE_S, self._trim)
        self.schedule_refill()

    def _trim(self) -> None:
        idle = time.monotonic() - self._taken
        if idle < IDLE_RELEASE_S or (self._refill is not None and not self._refill.done()):  # its spawn: one more
            self._trim_handle = asyncio.get_running_loop().call_later(max(0.1, IDLE_RELEASE_S - idle), self._trim)
            return
        self._trim_handle = None
        self._asked.clear()
        for launch in {worker.launch for worker in self._workers}:
            for extra in self.waiting(launch)[self.wanted(launch):]:
                self._workers.remove(extra)
                self._discard_later(extra)

    def _discard_later(self, worker: Worker) -> None:
        closing = asyncio.get_running_loop().create_task(worker.discard())
        self._discarding.add(closing)
        closing.add_done_callback(self._discarding.discard)

    async def aclose(self) -> None:
        """Stop refilling and trimming."""
        self._closed = True
        if self._trim_handle is not None:
            self._trim_handle.cancel()
        if self._refill is not None:
            # Not cancelled: cancelling a half-created subprocess can hang; fill stops after the current spawn.
            with contextlib.suppress(Exception):  # a failed refill spawn only means fewer warm workers to close
                await self._refill

    async def discard_all(self) -> None:
        """Close the waiting workers, and wait for those closing in the background."""
        waiting, self._workers = self._workers, []
        await asyncio.gather(*(worker.discard() for worker in waiting), *self._discarding, return_exceptions=True)


class RunDispatch:
    """Every run gets a fresh pre-started worker of its kind (read-only, writable through an overlay or not, with the
    network or the virtualenv writable); holds what is running, for `cancel_running`."""

    def __init__(self, project: Project, tier: str, policy: SandboxPolicy, warm_workers: int, scratch: Path,
                 runs: WritableRuns) -> None:
        self.project = project
        self.tier = tier
        self.runs = runs
        self._processes = policy.processes
        self._scratch = scratch
        self.toolchain: Toolchain | None = None
        """The project's toolchain every worker sees (set once it is discovered)."""
        self.warm = WarmPool(project.root, warm_workers, self.spawn, self.warm_kinds)
        self._running: set[Worker] = set()
        """Workers running a request (what `cancel_running` kills)."""

    async def run(self, request: dict[str, Any], policy: SandboxPolicy, attributed: bool, bridge: SandboxBridge | None,
                  on_output: OutputListener | None, lower: LowerState | None) -> tuple[Outcome, list[str]]:
        """The run's outcome, and the notes about what of its writes was not applied; `attributed`: it goes through
        an overlay, `lower`: the project's stamps taken before it."""
        worker = await self.warm.acquire(Launch(self.tier, network=bool(policy.network),
                                                project_writable=self.runs.project_writable(policy),
                                                venv_writable=self.runs.venv_writable(policy), overlay=attributed,
                                                memory_mb=policy.memory_mb))
        self._running.add(worker)
        since, dirs = time.time_ns(), worker.overlay
        try:
            outcome = await worker.run(request, timeout_s=policy.timeout_s, output_bytes=policy.output_bytes,
                                       processes=policy.processes, bridge=bridge, on_output=on_output)
        except asyncio.CancelledError:
            await asyncio.shield(worker.cancel())  # a cancelled turn leaves no process of its own behind
            with contextlib.suppress(asyncio.CancelledError):  # its cgroup is removed (the weak tier: scanned again)
                await asyncio.shield(worker.release())
            if dirs is not None:  # what it wrote before the kill is applied (and undoable)
                self.runs.collect(dirs, since, lower)
            raise
        finally:
            self._running.discard(worker)
            if worker.private_dir:
                shutil.rmtree(worker.private_dir, ignore_errors=True)
            self.warm.schedule_refill()
        if dirs is not None and outcome.start_failed and outcome.exit_code == MOUNT_FAILED:
            self.runs.remove_later(dirs)
            self.runs.overlay_problem = f"the project could not be mounted as an overlay; {PER_CALL_ONLY}"
            self.runs.ran(RunWrites(False))
            checked: list[str] = []
            try:  # it never started: safe to run again, without an overlay (so unfenced)
                outcome, notes = await self.run(request, policy, False, bridge, on_output, None)
            finally:  # what it changed is what differs from the project's stamps at its start
                if lower is not None:
                    checked = await asyncio.to_thread(self.runs.after_mount_failed, lower)
            return outcome, notes + checked
        if dirs is not None and any(os.scandir(dirs.upper)):
            return outcome, await asyncio.to_thread(self.runs.collect, dirs, since, lower)
        if dirs is not None:  # it wrote nothing (the usual read-mostly run): no thread hop
            self.runs.ran(RunWrites(True))
            self.runs.remove_later(dirs)
        return outcome, []

    async def spawn(self, launch: Launch) -> Worker:
        dirs = await self.runs.open_overlay() if launch.overlay else None
        try:
            return await Worker.spawn(self.project.root, launch, scratch=self._scratch, processes=self._processes,
                                      toolchain=self.toolchain, overlay=dirs)
        except BaseException:
            if dirs is not None:
                self.runs.drop_overlay(dirs)
            raise

    def warm_kinds(self) -> tuple[Launch, ...]:
        """The launches workers are kept warm for: read-only runs (bubblewrap only: the weak tier runs every call the
        same way), the most common, first; writable runs, through an overlay when it can be mounted."""
        writable = Launch(self.tier, overlay=self.runs.attributed(SandboxPolicy(project_writable=True)))
        return (Launch(self.tier, project_writable=False), writable) if self.tier == TIER_BUBBLEWRAP else (writable,)

    def prewarm(self, runs: int) -> None:
        """Have workers for `runs` offline read-only runs at once ready or booting now (a cold catalog open)."""
        writable = self.runs.project_writable(SandboxPolicy(project_writable=False))  # the weak tier's: True
        self.warm.prewarm(Launch(self.tier, project_writable=writable), runs)

    async def cancel_running(self) -> None:
        """Kill every running sandboxed process tree; their calls return error_kind "cancelled"."""
        await asyncio.gather(*(worker.cancel() for worker in list(self._running)))

    async def aclose(self) -> None:
        """Stop refilling, kill what runs, close the warm workers (all killed at once, then waited for together)."""
        await self.warm.aclose()
        running = list(self._running)
        await self.cancel_running()
        await asyncio.gather(*(worker.release() for worker in running), self.warm.discard_all())
