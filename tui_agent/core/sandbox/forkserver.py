"""The host side of a sandboxed fork server: one warm, pre-imported interpreter inside bubblewrap forks a child per run.

Each run keeps the guarantees of a fresh worker: its own cgroup (the child is moved into it before it reads its
request; on exit, timeout or cancel `stopping.py` kills everything in it by `cgroup.kill` and it is removed), its own
session, limits and seccomp filter applied in the child, its own output pipes and result channel, and a wiped
private /tmp. Runs through one server are serial; the Sandbox keeps a small pool of servers.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import socket
import struct
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tui_agent.core.errors import TuiAgentError
from tui_agent.core.sandbox.bridge import SandboxBridge, serve_channel
from tui_agent.core.sandbox.process import (DRAIN_AFTER_EXIT_S, Outcome, OutputListener, Worker, _Capture, _drain,
                                            decode_result, read_result)
from tui_agent.core.sandbox.launch import Launch
from tui_agent.core.sandbox.policy import TIER_BUBBLEWRAP
from tui_agent.core.sandbox.stopping import RunCgroup, RunProcesses, kill_base, stop
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


@dataclass
class ArmedChild:
    """A forked child waiting for its request, already inside its own run cgroup."""

    run_id: int
    channel: socket.socket
    out_read: int
    err_read: int
    cgroup: RunCgroup
    pid: int = 0

    @property
    def processes(self) -> RunProcesses:
        return RunProcesses(self.pid, self.cgroup, namespace=False, leader_is_child=False)

    def discard(self) -> None:
        """Never used: it is killed with whatever is in its cgroup (removed by the caller, `ForkServer._forget`)."""
        stop(self.processes)
        self.channel.close()
        for fd in (self.out_read, self.err_read):
            try:
                os.close(fd)
            except OSError:
                pass


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
        """Whether the current run's request was handed to its child: from then on it is never run again elsewhere."""
        self.idle_since = time.monotonic()
        self._run: RunProcesses | None = None
        self._cancelled = False
        self._next_id = 0
        self._exits: dict[int, asyncio.Future[int | None]] = {}
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
        problem: BaseException | None = None
        try:
            up = await _boot_byte(zygote, closing)
        except (asyncio.TimeoutError, OSError) as error:
            up, problem = b"", error
        if closing is not None and closing.is_set():
            await server.close()
            raise ForkServerError("the sandbox closed while a fork server started")
        if up != b"U":
            detail = (await _stderr_tail(zygote)) or str(problem or "it exited")
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
        run_id = self._next_id
        group = RunCgroup.create(f"tuiagent-{os.getpid()}-{secrets.token_hex(8)}", self.processes)
        if group is None:
            raise ForkServerError("could not create the run's cgroup")
        channel, child_channel = socket.socketpair()
        channel.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        channel.setblocking(False)
        out_read, out_write = os.pipe()
        err_read, err_write = os.pipe()
        armed = ArmedChild(run_id, channel, out_read, err_read, group)
        self._exits[run_id] = asyncio.get_running_loop().create_future()
        try:
            try:
                socket.send_fds(self.zygote.channel, [b"R" + RUN.pack(run_id)], [child_channel.fileno(), out_write, err_write])
            finally:
                child_channel.close()
                os.close(out_write)
                os.close(err_write)
            pid = await asyncio.wait_for(_hello_pid(channel), BOOT_TIMEOUT_S)
            zygote_group = self.zygote.cgroup
            if zygote_group is None or pid not in zygote_group.members():
                raise ForkServerError("the forked child could not be identified")
            armed.pid = pid
            await asyncio.to_thread(group.join, pid)
        except BaseException as error:
            armed.discard()
            self._forget(group)
            if isinstance(error, (OSError, ValueError, asyncio.TimeoutError)):
                raise ForkServerError(f"the fork server could not fork a run: {error}") from error
            raise
        return armed

    async def run(self, request: dict[str, Any], *, timeout_s: float, output_bytes: int, processes: int,
                  cancelled: bool = False, bridge: SandboxBridge | None = None,
                  on_output: OutputListener | None = None) -> Outcome:
        """Hand `request` to the armed child, collect its result and output, clean up after it, arm the next.

        `cancelled`: the caller was cancelled while it waited for this server (the run is killed at once).
        """
        started = time.perf_counter()
        self._cancelled = cancelled
        self.request_sent = False
        self.arm()
        assert self._armed is not None
        arming, self._armed = self._armed, None
        child = await arming
        self._run = child.processes
        try:
            child.cgroup.set_limit(processes, overhead=RUN_CGROUP_OVERHEAD)
            self.arm()  # the next child is forked and moved while this one runs
            return await self._collect(child, request, timeout_s, output_bytes, started, bridge, on_output)
        finally:
            child.channel.close()
            self._run = None
            await self._remove_cgroup(child.cgroup)

    async def _collect(self, child: ArmedChild, request: dict[str, Any], timeout_s: float, output_bytes: int,
                       started: float, bridge: SandboxBridge | None, on_output: OutputListener | None) -> Outcome:
        flood_limit = max(16 * 1024 * 1024, output_bytes * 64)
        flooded = asyncio.Event()
        out, err = _Capture(output_bytes, listener=on_output), _Capture(output_bytes)
        readers = [asyncio.create_task(_drain(await _pipe_reader(child.out_read), out, flood_limit, flooded)),
                   asyncio.create_task(_drain(await _pipe_reader(child.err_read), err, flood_limit, flooded))]
        exited = self._exits[child.run_id]
        result_task = asyncio.create_task(read_result(child.channel, keep_on_reset=False) if bridge is None
                                          else serve_channel(child.channel, bridge))
        protocol_error: str | None = None
        self.request_sent = True
        try:
            bounded = {**request, "bounded": True}  # by its cgroup: the child need not adopt and kill what it starts
            await asyncio.get_running_loop().sock_sendall(child.channel, (json.dumps(bounded) + "\n").encode())
        except OSError as error:
            protocol_error = f"the sandboxed worker did not take the request: {error}"
        flood_waiter = asyncio.create_task(flooded.wait())
        if self._cancelled:
            self.kill_run()  # cancelled while the child was being handed over
        waiters: set[asyncio.Future[Any]] = {exited, flood_waiter}
        try:
            done, _pending = await asyncio.wait(waiters, timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            await asyncio.shield(_stop_reading(result_task, flood_waiter))
            raise
        timed_out = not done
        if timed_out or flooded.is_set() or self._cancelled:
            self.kill_run()
        exit_code = await exited
        self._exits.pop(child.run_id, None)
        flood_waiter.cancel()
        await self._remove_cgroup(child.cgroup)  # leftovers die before the pipes and the channel are drained
        try:
            await asyncio.wait_for(asyncio.gather(*readers), DRAIN_AFTER_EXIT_S)
        except asyncio.TimeoutError:
            pass
        try:
            raw = await asyncio.wait_for(result_task, DRAIN_AFTER_EXIT_S)
        except (asyncio.TimeoutError, OSError):  # OSError: the child died with the channel half-read (a kill)
            raw = b""
        response, decode_error = decode_result(raw)
        if exit_code is None and protocol_error is None:
            protocol_error = "the sandboxed fork server died during the run"
        return Outcome(response=response, stdout=bytes(out.data), stderr=bytes(err.data), stdout_total=out.total,
                       stderr_total=err.total, exit_code=exit_code, timed_out=timed_out, cancelled=self._cancelled,
                       flooded=flooded.is_set(), protocol_error=protocol_error or decode_error,
                       duration_ms=(time.perf_counter() - started) * 1000)

    async def _read_exits(self) -> None:
        """Resolve each run's exit future from the server's b"D" reports; all pending ones get None if it dies."""
        loop = asyncio.get_running_loop()
        buffer = b""
        try:
            while True:
                chunk = await loop.sock_recv(self.zygote.channel, 4096)
                if not chunk:
                    return
                buffer += chunk
                while len(buffer) >= 1 + EXIT.size:
                    run_id, status = EXIT.unpack(buffer[1:1 + EXIT.size])
                    buffer = buffer[1 + EXIT.size:]
                    future = self._exits.get(run_id)
                    if future is not None and not future.done():
                        future.set_result(status)
        except OSError:
            return
        finally:
            for future in self._exits.values():
                if not future.done():
                    future.set_result(None)

    async def _remove_cgroup(self, group: RunCgroup) -> None:
        """Kill what is left in a run's cgroup and wait until it is gone; an empty one is removed in the background."""
        if not group.folders[0].exists() or group in self._removing:
            return
        if group.members():
            await asyncio.to_thread(group.remove)
            return
        self._forget(group)

    def _forget(self, group: RunCgroup) -> None:
        """Remove a run cgroup in the background (rmdir waits for the kernel); `close` waits for it."""
        removal = asyncio.get_running_loop().create_task(asyncio.to_thread(group.remove))
        self._removing[group] = removal
        removal.add_done_callback(lambda _task: self._removing.pop(group, None))

    def kill_run(self) -> None:
        """Kill everything in the current run's cgroup (the child and all it started), at once."""
        if self._run is not None:
            stop(self._run)

    async def cancel(self) -> None:
        self._cancelled = True
        self.kill_run()

    async def close(self) -> None:
        arming, self._armed = self._armed, None
        if arming is not None:
            try:
                child = await arming
            except (ForkServerError, asyncio.CancelledError):
                pass
            else:
                child.discard()
                self._forget(child.cgroup)
        if self._exit_reader is not None:
            # Stop the reader before the channel closes: a socket closed under a pending `sock_recv` is dropped by
            # epoll and the read never wakes (a forked child can hold the server's end open past the server's death,
            # so EOF may never come either). That was a hang on exit with nothing left to wait for.
            self._exit_reader.cancel()
            await asyncio.gather(self._exit_reader, return_exceptions=True)
        await self.zygote.discard()
        if self._run is not None and self._run.cgroup is not None:  # closed during a run: its cgroup goes now
            self._forget(self._run.cgroup)
        await asyncio.gather(*list(self._removing.values()), return_exceptions=True)


async def _stop_reading(*tasks: asyncio.Task[Any]) -> None:
    """End the reads of an abandoned run before its channel is closed: a closed socket with a pending read stays
    registered with the event loop, and the next socket given the same descriptor number (the next armed child's)
    would never be woken, so that run would wait for the boot timeout."""
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


async def _boot_byte(zygote: Worker, closing: asyncio.Event | None) -> bytes:
    """The server's first byte (b"U" once it is up), or b"" when `closing` was set first."""
    loop = asyncio.get_running_loop()
    received = asyncio.ensure_future(loop.sock_recv(zygote.channel, 1))
    waiters = {received, *([asyncio.ensure_future(closing.wait())] if closing is not None else [])}
    done, pending = await asyncio.wait(waiters, timeout=BOOT_TIMEOUT_S, return_when=asyncio.FIRST_COMPLETED)
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)  # no read left pending on a channel about to close
    if received in done:
        return received.result()
    if not done:
        raise asyncio.TimeoutError
    return b""


async def _pipe_reader(fd: int) -> asyncio.StreamReader:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=2**20)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(fd, "rb", buffering=0))
    return reader


async def _hello_pid(channel: socket.socket) -> int:
    """The host pid of the child that wrote the hello byte, from the kernel-attached credentials (SO_PASSCRED)."""
    loop = asyncio.get_running_loop()
    while True:
        try:
            data, ancillary, _flags, _address = channel.recvmsg(1, socket.CMSG_SPACE(CREDENTIALS.size))
            break
        except BlockingIOError:
            ready = loop.create_future()
            loop.add_reader(channel.fileno(), _settle, ready)
            try:
                await ready
            finally:
                loop.remove_reader(channel.fileno())
    if data != b"H":
        raise ValueError("no hello from the forked run")
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS and len(payload) >= CREDENTIALS.size:
            return int(CREDENTIALS.unpack(payload[: CREDENTIALS.size])[0])
    raise ValueError("the hello carried no credentials")


async def _stderr_tail(zygote: Worker) -> str:
    stream = zygote.process.stderr
    if stream is None:
        return ""
    try:
        data = await asyncio.wait_for(stream.read(4000), 1.0)
    except (asyncio.TimeoutError, OSError):
        return ""
    return data.decode(errors="replace").strip()


def _settle(future: asyncio.Future[None]) -> None:
    """Wake the waiter once (a reader callback may fire again before it is removed)."""
    if not future.done():
        future.set_result(None)
