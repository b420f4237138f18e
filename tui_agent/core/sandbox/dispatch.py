"""Where a sandboxed run executes: a child of a warm fork server (`ForkPool`: a few per project mode), or a fresh
pre-started worker (`WarmPool`: network runs, writable runs through an overlay, every run without fork servers)."""

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
from tui_agent.core.sandbox.forkserver import ForkServer, ForkServerError, fork_servers_supported
from tui_agent.core.sandbox.launch import Launch, project_layout
from tui_agent.core.sandbox.policy import Outcome, RunWrites, SandboxBridge, SandboxPolicy
from tui_agent.core.sandbox.process import OutputListener, Worker
from tui_agent.core.sandbox.toolchain import Toolchain
from tui_agent.core.sandbox.writable_runs import MOUNT_FAILED, PER_CALL_ONLY, LowerState, WritableRuns

Spawn = Callable[[Launch], Awaitable[Worker]]
MAX_SERVERS_PER_MODE = 2
"""Runs through one server are serial; two per mode keep both cores busy during a cold catalog validation."""
IDLE_RELEASE_S = 2.0
"""An extra server idle this long is closed (the pool a cold open starts is released once it is done)."""
KEEP_PER_MODE = 1


class WarmPool:
    """Up to `size` pre-started workers per kept `Launch`; `kinds()` says which offline launches are kept full (they
    can change while tuiagent runs: the overlay may fail, the fork servers may go)."""

    def __init__(self, root: Path, size: int, spawn: Spawn, kinds: Callable[[], tuple[Launch, ...]]) -> None:
        self.root = root
        self.size = size
        self._spawn = spawn
        self._kinds = kinds
        self._workers: list[Worker] = []
        self._used: set[Launch] = set()
        """Read-only kinds join the refill after their first use (catalog validation); writable ones always do."""
        self._refill: asyncio.Task[None] | None = None
        self._closed = False

    async def acquire(self, launch: Launch) -> Worker:
        """A waiting worker started as `launch` under the project's current layout, or a new one (network runs and
        runs with the virtualenv writable always get a new one)."""
        if launch.network or launch.venv_writable:
            return await self._spawn(launch)
        self._used.add(launch)
        layout = project_layout(self.root, launch.project_writable)
        for candidate in [worker for worker in self._workers if worker.launch == launch]:
            self._workers.remove(candidate)
            if candidate.alive and candidate.layout == layout:
                return candidate
            asyncio.get_running_loop().create_task(candidate.discard())
        return await self._spawn(launch)

    async def fill(self) -> None:
        kinds = self._kinds()
        for stale in [worker for worker in self._workers if worker.launch not in kinds]:
            self._workers.remove(stale)
            asyncio.get_running_loop().create_task(stale.discard())
        for launch in kinds:
            while not self._closed and self._kept(launch) and self._waiting(launch) < self.size:
                self._workers.append(await self._spawn(launch))

    def _kept(self, launch: Launch) -> bool:
        return launch.project_writable or launch in self._used

    def _waiting(self, launch: Launch) -> int:
        return sum(1 for worker in self._workers if worker.launch == launch)

    def schedule_refill(self) -> None:
        if self._closed or (self._refill is not None and not self._refill.done()):
            return
        self._refill = asyncio.get_running_loop().create_task(self.fill())

    async def aclose(self) -> None:
        self._closed = True
        if self._refill is not None:
            # Not cancelled: cancelling a half-created subprocess can hang; fill stops after the current spawn.
            with contextlib.suppress(Exception):  # a failed refill spawn only means fewer warm workers to close
                await self._refill

    async def discard_all(self) -> None:
        waiting, self._workers = self._workers, []
        await asyncio.gather(*(worker.discard() for worker in waiting), return_exceptions=True)


class ForkPool:
    """Hands out an idle fork server for a mode (starting one when there is room), takes it back, trims idle extras."""

    def __init__(self, project: Path, scratch: Path, processes: int) -> None:
        self.project = project
        self.scratch = scratch
        self.processes = processes
        self._servers: dict[bool, list[ForkServer]] = {True: [], False: []}
        self._starting: dict[bool, int] = {True: 0, False: 0}
        self._freed = asyncio.Event()
        self._trim_handle: asyncio.TimerHandle | None = None
        self._closing = asyncio.Event()
        """Set by `aclose`: servers still booting are killed rather than waited for."""
        self._warming: set[asyncio.Task[None]] = set()
        self.toolchain: Toolchain | None = None
        """The sandbox's toolchain (PATH, read-only folders, build variables): fork servers start with it."""

    def servers(self) -> list[ForkServer]:
        return [server for pool in self._servers.values() for server in pool]

    async def acquire(self, project_writable: bool) -> ForkServer:
        """An idle server for this mode, marked busy; raises ForkServerError when none can be started."""
        layout = project_layout(self.project, project_writable)
        pool = self._servers[project_writable]
        while True:
            for server in [server for server in pool if not server.busy]:
                if not server.alive or server.layout != layout:  # its binds were made for another layout, or it died
                    self.discard(server)
                else:
                    server.busy = True
                    return server
            if len(pool) + self._starting[project_writable] < MAX_SERVERS_PER_MODE:
                return await self._start(project_writable)
            self._freed.clear()
            await self._freed.wait()

    def warm(self, project_writable: bool, count: int) -> None:
        """Boot servers in the background until `count` of this mode (at most the pool's room) are up or starting:
        runs about to go at once (a cold open's batches) then find them ready. Idle extras are closed as usual."""
        pool = self._servers[project_writable]
        missing = min(count, MAX_SERVERS_PER_MODE) - len(pool) - self._starting[project_writable]
        for _ in range(max(0, missing) if not self._closing.is_set() else 0):
            task = asyncio.get_running_loop().create_task(self._start_idle(project_writable))
            self._warming.add(task)
            task.add_done_callback(self._warming.discard)

    async def _start_idle(self, project_writable: bool) -> None:
        try:
            self.release(await self._start(project_writable))
        except (ForkServerError, OSError, asyncio.CancelledError):
            pass  # a run that needs the server starts (or reports) one itself

    async def _start(self, project_writable: bool) -> ForkServer:
        self._starting[project_writable] += 1
        try:
            server = await ForkServer.start(self.project, scratch=self.scratch, processes=self.processes,
                                            project_writable=project_writable, toolchain=self.toolchain,
                                            closing=self._closing)
        finally:
            self._starting[project_writable] -= 1
            self._freed.set()  # waiters look again (a failed start leaves room)
        server.busy = True
        if self._closing.is_set():
            await server.close()
            raise asyncio.CancelledError("the sandbox closed while a fork server started")
        self._servers[project_writable].append(server)
        return server

    def release(self, server: ForkServer) -> None:
        server.busy = False
        server.idle_since = time.monotonic()
        self._freed.set()
        if self._trim_handle is None and not self._closing.is_set():
            self._trim_handle = asyncio.get_running_loop().call_later(IDLE_RELEASE_S, self._trim)

    def discard(self, server: ForkServer) -> None:
        """Drop a server that failed, died or is no longer wanted (it is closed in the background)."""
        for pool in self._servers.values():
            if server in pool:
                pool.remove(server)
        self._freed.set()
        asyncio.get_running_loop().create_task(server.close())

    def _trim(self) -> None:
        self._trim_handle = None
        for pool in self._servers.values():
            for server in [server for server in pool if not server.busy][KEEP_PER_MODE:]:
                if time.monotonic() - server.idle_since >= IDLE_RELEASE_S:
                    self.discard(server)
        if any(len(pool) > KEEP_PER_MODE for pool in self._servers.values()) and not self._closing.is_set():
            self._trim_handle = asyncio.get_running_loop().call_later(IDLE_RELEASE_S, self._trim)

    async def aclose(self) -> None:
        self._closing.set()
        if self._trim_handle is not None:
            self._trim_handle.cancel()
        await asyncio.gather(*list(self._warming), return_exceptions=True)  # each closes its server when it sees closing
        servers, self._servers = self.servers(), {True: [], False: []}
        await asyncio.gather(*(server.cancel() for server in servers if server.busy), return_exceptions=True)
        await asyncio.gather(*(server.close() for server in servers), return_exceptions=True)


class RunDispatch:
    """Offline runs under bubblewrap (with per-run cgroups) are forked from warm fork servers (pre-imported
    interpreters inside the sandbox); network runs, writable runs through an overlay, and every run on a machine
    without fork servers get a fresh pre-started worker. Holds what is running, for `cancel_running`."""

    def __init__(self, project: Project, tier: str, policy: SandboxPolicy, warm_workers: int, scratch: Path,
                 runs: WritableRuns, fork_servers: bool) -> None:
        self.project = project
        self.tier = tier
        self.runs = runs
        self._processes = policy.processes
        self._scratch = scratch
        self.toolchain: Toolchain | None = None
        """The project's toolchain every worker and fork server sees (set once it is discovered)."""
        self.warm = WarmPool(project.root, warm_workers, self.spawn, self.warm_kinds)
        self.fork_pool: ForkPool | None = (ForkPool(project.root, scratch, policy.processes)
                                           if fork_servers and fork_servers_supported(tier) else None)
        self.fork_problem: str | None = None
        """Why runs went back to fresh workers (a fork server failed to start), or None."""
        self._running: set[Worker | ForkServer] = set()
        """Workers and fork servers running a request (what `cancel_running` kills)."""
        self._prestart: asyncio.Task[None] | None = None
        self._cancels = 0
        """How many times `cancel_running` was called: a run waiting for a fork server notices one it missed."""

    def use_toolchain(self, toolchain: Toolchain | None) -> None:
        self.toolchain = toolchain
        if self.fork_pool is not None:
            self.fork_pool.toolchain = toolchain

    def prestart_fork_server(self, *, project_writable: bool) -> None:
        """Boot a fork server in the background (read-only: catalog validation and most tool calls use it)."""
        pool = self.fork_pool
        assert pool is not None

        async def boot() -> None:
            try:
                pool.release(await pool.acquire(project_writable))
            except (ForkServerError, OSError) as error:
                self._fork_failed(error)

        self._prestart = asyncio.get_running_loop().create_task(boot())

    async def run(self, request: dict[str, Any], policy: SandboxPolicy, attributed: bool, bridge: SandboxBridge | None,
                  on_output: OutputListener | None, lower: LowerState | None) -> tuple[Outcome, list[str]]:
        """The run's outcome, and the notes about what of its writes was not applied; `attributed`: it goes through
        an overlay (never forked), `lower`: the project's stamps taken before it."""
        if self.fork_pool is not None and not policy.network and not self.runs.venv_writable(policy) and not attributed:
            outcome = await self._run_forked(request, policy, bridge, on_output)
            if outcome is not None:
                return outcome, []
        return await self._run_fresh(request, policy, self.runs.project_writable(policy), bridge, on_output, lower)

    async def _run_fresh(self, request: dict[str, Any], policy: SandboxPolicy, writable: bool,
                         bridge: SandboxBridge | None, on_output: OutputListener | None = None,
                         lower: LowerState | None = None) -> tuple[Outcome, list[str]]:
        """The run in a fresh pre-started worker (network runs, writable runs through an overlay, or no fork server),
        and the notes about what of its writes was not applied; `lower`: the project's stamps taken before it."""
        worker = await self.warm.acquire(Launch(self.tier, network=bool(policy.network), project_writable=writable,
                                                venv_writable=self.runs.venv_writable(policy),
                                                overlay=self.runs.attributed(policy)))
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
            return await self._run_fresh(request, policy, writable, bridge, on_output, lower)  # never started: safe
        if dirs is not None and any(os.scandir(dirs.upper)):
            return outcome, await asyncio.to_thread(self.runs.collect, dirs, since, lower)
        if dirs is not None:  # it wrote nothing (the usual read-mostly run): no thread hop
            self.runs.ran(RunWrites(True))
            self.runs.remove_later(dirs)
        return outcome, []

    async def _run_forked(self, request: dict[str, Any], policy: SandboxPolicy,
                          bridge: SandboxBridge | None, on_output: OutputListener | None = None) -> Outcome | None:
        """The run in a child of a warm fork server; None when no child took it (a fresh worker will)."""
        pool = self.fork_pool
        assert pool is not None
        cancels = self._cancels
        try:
            server = await pool.acquire(self.runs.project_writable(policy))
        except (ForkServerError, OSError) as error:
            self._fork_failed(error)
            return None
        self._running.add(server)
        try:
            outcome = await server.run(request, timeout_s=policy.timeout_s, output_bytes=policy.output_bytes,
                                       processes=policy.processes, cancelled=cancels != self._cancels, bridge=bridge,
                                       on_output=on_output)
        except (ForkServerError, OSError):
            pool.discard(server)  # it never reached a child: a fresh worker runs it, the next fork a new server
            return None
        except asyncio.CancelledError:
            await asyncio.shield(server.cancel())  # a cancelled turn leaves no process of its own behind
            pool.discard(server)
            raise
        finally:
            self._running.discard(server)
        if outcome.exit_code is None:
            pool.discard(server)  # the server died or failed under this run: the next one starts a new server
        else:
            pool.release(server)
        return outcome

    def _fork_failed(self, error: BaseException) -> None:
        """A fork server could not start or serve: every later run uses a fresh worker (and says why)."""
        self.fork_problem = f"fork server unavailable, each run starts a fresh sandbox: {error}"
        pool, self.fork_pool = self.fork_pool, None
        if pool is not None:
            asyncio.get_running_loop().create_task(pool.aclose())

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
        """Which offline launches fresh workers are kept warm for: offline runs are forked from fork servers, except
        writable runs through an overlay (a fresh mount per run: it caches what it looked up)."""
        writable = self.runs.attributed(SandboxPolicy(project_writable=True))
        kinds = (Launch(self.tier, overlay=writable), Launch(self.tier, project_writable=False))
        if self.fork_pool is None:
            return kinds
        return kinds[:1] if writable else ()

    async def cancel_running(self) -> None:
        """Kill every running sandboxed process tree; their calls return error_kind "cancelled"."""
        self._cancels += 1
        await asyncio.gather(*(worker.cancel() for worker in list(self._running)))

    async def aclose(self) -> None:
        """Stop refilling, kill what runs, close the fork servers and the warm workers."""
        await self.warm.aclose()
        running = [worker for worker in self._running if isinstance(worker, Worker)]
        await self.cancel_running()
        await asyncio.gather(*(worker.release() for worker in running))  # closed: no process and no cgroup left
        # The fork servers and the warm workers are killed at once (cgroup.kill) and waited for together.
        await asyncio.gather(*([self.fork_pool.aclose()] if self.fork_pool is not None else []), self.warm.discard_all())
        if self._prestart is not None:
            await asyncio.gather(self._prestart, return_exceptions=True)
