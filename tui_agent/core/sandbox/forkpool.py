"""A small pool of fork servers per project mode (writable / read-only): busy ones are not shared, idle extras are closed."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from tui_agent.core.sandbox.launch import project_layout
from tui_agent.core.sandbox.forkserver import ForkServer, ForkServerError
from tui_agent.core.sandbox.toolchain import Toolchain

MAX_SERVERS_PER_MODE = 2
"""Runs through one server are serial; two per mode keep both cores busy during a cold catalog validation."""
IDLE_RELEASE_S = 2.0
"""An extra server idle this long is closed (the pool a cold open starts is released once it is done)."""
KEEP_PER_MODE = 1


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
        self._closed = False
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
            for server in list(pool):
                if not server.busy and (not server.alive or server.layout != layout):
                    pool.remove(server)  # its binds were made for another layout, or it died
                    asyncio.get_running_loop().create_task(server.close())
            for server in pool:
                if not server.busy:
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
        for _ in range(max(0, missing) if not self._closed else 0):
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
        if self._closed:
            await server.close()
            raise asyncio.CancelledError("the sandbox closed while a fork server started")
        self._servers[project_writable].append(server)
        return server

    def release(self, server: ForkServer) -> None:
        server.busy = False
        server.idle_since = time.monotonic()
        self._freed.set()
        if self._trim_handle is None and not self._closed:
            self._trim_handle = asyncio.get_running_loop().call_later(IDLE_RELEASE_S, self._trim)

    def discard(self, server: ForkServer) -> None:
        """Drop a server that failed (it is closed in the background)."""
        for pool in self._servers.values():
            if server in pool:
                pool.remove(server)
        self._freed.set()
        asyncio.get_running_loop().create_task(server.close())

    def _trim(self) -> None:
        self._trim_handle = None
        now = time.monotonic()
        extras_left = False
        for pool in self._servers.values():
            idle = [server for server in pool if not server.busy]
            for server in idle[KEEP_PER_MODE:] if len(pool) > KEEP_PER_MODE else []:
                if now - server.idle_since >= IDLE_RELEASE_S:
                    pool.remove(server)
                    asyncio.get_running_loop().create_task(server.close())
                else:
                    extras_left = True
            extras_left = extras_left or len(pool) > KEEP_PER_MODE
        if extras_left and not self._closed:
            self._trim_handle = asyncio.get_running_loop().call_later(IDLE_RELEASE_S, self._trim)

    async def aclose(self) -> None:
        self._closed = True
        self._closing.set()
        if self._trim_handle is not None:
            self._trim_handle.cancel()
        await asyncio.gather(*list(self._warming), return_exceptions=True)  # each closes its server when it sees _closed
        servers = self.servers()
        self._servers = {True: [], False: []}
        await asyncio.gather(*(server.cancel() for server in servers if server.busy), return_exceptions=True)
        await asyncio.gather(*(server.close() for server in servers), return_exceptions=True)
