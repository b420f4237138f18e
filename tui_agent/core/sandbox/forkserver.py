"""The host side of a sandboxed fork server: one warm, pre-imported interpreter inside bubblewrap forks a child per run.

Each run keeps the guarantees of a fresh worker: its own cgroup (the child is moved into it before it reads its
request; on exit, timeout or cancel `stopping.py` kills everything in it by `cgroup.kill` and it is removed), its own
session, limits and seccomp filter applied in the child, its own output pipes and result channel, and a wiped
private /tmp. Runs through one server are serial; `dispatch.ForkPool` keeps a few servers per project mode.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import socket
import struct
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tui_agent.core.errors import TuiAgentError
from tui_agent.core.sandbox.launch import Launch
from tui_agent.core.sandbox.policy import TIER_BUBBLEWRAP, Outcome, SandboxBridge
from tui_agent.core.sandbox.process import Capture, OutputListener, Worker, collect
from tui_agent.core.sandbox.stopping import RunCgroup, RunProcesses, kill_base
from tui_agent.core.sandbox.toolchain import Toolchain
from tui_agent.core.sandbox.zygote import EXIT, RUN

CREDENTIALS = struct.Struct("3i")  # struct ucred: pid, uid, gid
BOOT_TIMEOUT_S = 30.0
RUN_CGROUP_OVERHEAD = 1
"""Processes of the sandbox itself inside a run's cgroup: only the forked child."""


def fork_servers_supported(tier: str) -> bool:
    """Fork servers need bubblewrap (a private /tmp to wipe) and per-run cgroups with `cgroup.kill` (a forked run
    shares the server's PID namespace: only its cgroup holds all of its processes)."""
    return tier == TIER_BUBBLEWRAP and kill_base() is not None


class ForkServerError(TuiAgentError):
    """The fork server could not start or died."""


@dataclass(eq=False)
class ArmedChild:
    """A forked child waiting for its request, already inside its own run cgroup (what `process.collect` runs)."""

    server: ForkServer
    run_id: int
    channel: socket.socket
    out_read: int
    err_read: int
    cgroup: RunCgroup
    exited: asyncio.Future[int | None]
    """Resolved by the server's b"D" report (None if the server dies first)."""
    pid: int = 0

    @property
    def processes(self) -> RunProcesses:
        return RunProcesses(self.pid, self.cgroup, namespace=False)

    @property
    def cancelled(self) -> bool:
        return self.server.cancelled

    async def kill(self) -> None:
        await self.processes.stop(leader_alive=False)

    async def exit_code(self) -> int | None:
        return await self.exited

    async def release(self) -> None:
        self.server.exits.pop(self.run_id, None)
        await self.server._remove_cgroup(self.cgroup)

    async def discard(self) -> None:
        """Never used: it is killed with whatever is in its cgroup, which is removed in the background."""
        await self.processes.stop(leader_alive=False)
        self.server.exits.pop(self.run_id, None)
        self.channel.close()
        for fd in (self.out_read, self.err_read):
            with contextlib.suppress(OSError):
                os.close(fd)
        self.server._forget(self.cgroup)


class ForkServer:
    """A booted fork server (a Worker started in serve mode); `run` serves one request in a forked child.

    One child is kept armed (forked, moved into its run cgroup, waiting): moving a process between cgroups
    waits for an RCU grace period (milliseconds), so it happens while the previous run executes or the server
    is idle, not while a call waits.
    """

    def __init__(self, zygote: Worker, project_writable: bool, processes: int) -> None:
        self.zygote = zygote
        self.project_writable = project_writable
        self.processes = processes
        self.layout = zygote.layout
        self.busy = False
        self.request_sent = False
        """Whether the current run's request was handed to its child (from then on it is never run again elsewhere)."""
        self.idle_since = time.monotonic()
        self.cancelled = False
        self.exits: dict[int, asyncio.Future[int | None]] = {}
        self._child: ArmedChild | None = None
        self._next_id = 0
        self._exit_reader: asyncio.Task[None] | None = None
        self._armed: asyncio.Task[ArmedChild] | None = None
        self._removing: dict[RunCgroup, asyncio.Task[None]] = {}
        """Empty run cgroups being removed (rmdir waits for the kernel): closing waits for them."""

    @classmethod
    async def start(cls, project: Path, *, scratch: Path, processes: int, project_writable: bool,
                    toolchain: Toolchain | None = None, closing: asyncio.Event | None = None) -> "ForkServer":
        """Boot a server; `closing` set meanwhile (the sandbox closes) kills it at once instead of waiting for it."""
        launch = Launch(TIER_BUBBLEWRAP, project_writable=project_writable, serve=True)
        zygote = await Worker.spawn(project, launch, scratch=scratch, processes=processes, toolchain=toolchain)
        server = cls(zygote, project_writable, processes)
        booted = await zygote.await_boot(BOOT_TIMEOUT_S, closing)
        if closing is not None and closing.is_set():
            await server.close()
            raise ForkServerError("the sandbox closed while a fork server started")
        if not booted:
            detail = await _stderr_tail(zygote) or ("it exited" if booted is False else "it did not answer")
            await server.close()
            raise ForkServerError(f"the sandboxed fork server did not start: {detail}")
        server._exit_reader = asyncio.get_running_loop().create_task(server._read_exits())
        server.arm()
        return server

    @property
    def alive(self) -> bool:
        return self.zygote.alive and self._exit_reader is not None and not self._exit_reader.done()

    def arm(self) -> None:
        """Start forking the next child in the background (if none is armed or arming)."""
        if self._armed is None and self.alive:
            self._armed = asyncio.get_running_loop().create_task(self._arm())

    async def _arm(self) -> ArmedChild:
        self._next_id += 1
        group = RunCgroup.create(f"tuiagent-{os.getpid()}-{secrets.token_hex(8)}", self.processes)
        if group is None:
            raise ForkServerError("could not create the run's cgroup")
        channel, child_channel = socket.socketpair()
        channel.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        channel.setblocking(False)
        (out_read, out_write), (err_read, err_write) = os.pipe(), os.pipe()
        exited = self.exits[self._next_id] = asyncio.get_running_loop().create_future()
        child = ArmedChild(self, self._next_id, channel, out_read, err_read, group, exited)
        try:
            try:
                socket.send_fds(self.zygote.channel, [b"R" + RUN.pack(child.run_id)],
                                [child_channel.fileno(), out_write, err_write])
            finally:
                child_channel.close()
                os.close(out_write)
                os.close(err_write)
            child.pid = await asyncio.wait_for(_hello_pid(channel), BOOT_TIMEOUT_S)
            if self.zygote.cgroup is None or child.pid not in self.zygote.cgroup.members():
                raise ForkServerError("the forked child could not be identified")
            await asyncio.to_thread(group.join, child.pid)
        except BaseException as error:
            await child.discard()
            if isinstance(error, (OSError, ValueError, asyncio.TimeoutError)):
                raise ForkServerError(f"the fork server could not fork a run: {error}") from error
            raise
        return child

    async def run(self, request: dict[str, Any], *, timeout_s: float, output_bytes: int, processes: int,
                  cancelled: bool = False, bridge: SandboxBridge | None = None,
                  on_output: OutputListener | None = None) -> Outcome:
        """Hand `request` to the armed child, collect its result and output, clean up after it, arm the next.

        `cancelled`: the caller was cancelled while it waited for this server (the run is killed at once). Raises
        ForkServerError or OSError when the server failed before the request reached a child; once it did, a failure
        is the run's outcome (exit code None): it is never run again elsewhere (its child may have done part of it).
        """
        started = time.perf_counter()
        self.cancelled, self.request_sent = cancelled, False
        self.arm()
        assert self._armed is not None
        arming, self._armed = self._armed, None
        child = self._child = await arming
        try:
            child.cgroup.set_limit(processes, overhead=RUN_CGROUP_OVERHEAD)
            self.arm()  # the next child is forked and moved while this one runs
            streams = (await _pipe_reader(child.out_read), await _pipe_reader(child.err_read))
            capture = Capture(streams, output_bytes, on_output)
            self.request_sent = True
            bounded = {**request, "bounded": True}  # by its cgroup: the child need not adopt and kill what it starts
            return await collect(child, bounded, capture, timeout_s=timeout_s, started=started, bridge=bridge,
                                 keep_on_reset=False)
        except (ForkServerError, OSError) as error:
            if not self.request_sent:
                raise
            return Outcome(cancelled=self.cancelled,
                           protocol_error=f"the sandboxed fork server failed during the run ({error}); not run again")
        finally:
            child.channel.close()
            self._child = None
            with contextlib.suppress(OSError):  # the run is over: its outcome stands (it must never run again)
                await self._remove_cgroup(child.cgroup)

    async def _read_exits(self) -> None:
        """Resolve each run's exit future from the server's b"D" reports; all pending ones get None if it dies."""
        loop = asyncio.get_running_loop()
        buffer = b""
        try:
            while chunk := await loop.sock_recv(self.zygote.channel, 4096):
                buffer += chunk
                while len(buffer) >= 1 + EXIT.size:
                    run_id, status = EXIT.unpack(buffer[1:1 + EXIT.size])
                    buffer = buffer[1 + EXIT.size:]
                    future = self.exits.get(run_id)
                    if future is not None and not future.done():
                        future.set_result(status)
        except OSError:
            return
        finally:
            for future in self.exits.values():
                if not future.done():
                    future.set_result(None)

    async def _remove_cgroup(self, group: RunCgroup) -> None:
        """Kill what is left in a run's cgroup and wait until it is gone; an empty one is removed in the background."""
        if not group.folders[0].exists() or group in self._removing:
            return
        if group.members():
            await asyncio.to_thread(group.remove)
        else:
            self._forget(group)

    def _forget(self, group: RunCgroup) -> None:
        """Remove a run cgroup in the background (rmdir waits for the kernel); `close` waits for it."""
        removal = asyncio.get_running_loop().create_task(asyncio.to_thread(group.remove))
        self._removing[group] = removal
        removal.add_done_callback(lambda _task: self._removing.pop(group, None))

    async def cancel(self) -> None:
        """Kill everything in the current run's cgroup (the child and all it started), at once."""
        self.cancelled = True
        if self._child is not None:
            await self._child.processes.stop(leader_alive=False)

    async def close(self) -> None:
        arming, self._armed = self._armed, None
        if arming is not None:
            with contextlib.suppress(ForkServerError, asyncio.CancelledError):
                await (await arming).discard()
        if self._exit_reader is not None:
            # Stop the reader before the channel closes: a socket closed under a pending `sock_recv` is dropped by
            # epoll and the read never wakes (a forked child can hold the server's end open past the server's death,
            # so EOF may never come either). That was a hang on exit with nothing left to wait for.
            self._exit_reader.cancel()
            await asyncio.gather(self._exit_reader, return_exceptions=True)
        await self.zygote.discard()
        if self._child is not None:  # closed during a run: its cgroup goes now
            self._forget(self._child.cgroup)
        await asyncio.gather(*list(self._removing.values()), return_exceptions=True)


async def _pipe_reader(fd: int) -> asyncio.StreamReader:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=2**20)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(fd, "rb", buffering=0))
    return reader


async def _hello_pid(channel: socket.socket) -> int:
    """The host pid of the child that wrote the hello byte, from the kernel-attached credentials (SO_PASSCRED)."""
    loop, readable = asyncio.get_running_loop(), asyncio.Event()
    loop.add_reader(channel.fileno(), readable.set)
    try:
        await readable.wait()
    finally:
        loop.remove_reader(channel.fileno())
    data, ancillary, _flags, _address = channel.recvmsg(1, socket.CMSG_SPACE(CREDENTIALS.size))
    if data != b"H":
        raise ValueError("no hello from the forked run")
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS and len(payload) >= CREDENTIALS.size:
            return int(CREDENTIALS.unpack(payload[: CREDENTIALS.size])[0])
    raise ValueError("the hello carried no credentials")


async def _stderr_tail(zygote: Worker) -> str:
    try:
        assert zygote.process.stderr is not None
        return (await asyncio.wait_for(zygote.process.stderr.read(4000), 1.0)).decode(errors="replace").strip()
    except (asyncio.TimeoutError, OSError):
        return ""
