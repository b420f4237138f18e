"""One sandboxed worker process: spawn it, hand it a request over a private socket, collect its outcome."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from tui_agent.core.listeners import tell
from tui_agent.core.sandbox import launch as launch_path, overlay as overlays
from tui_agent.core.sandbox.bridge import RESULT_LIMIT, SandboxBridge, serve_channel
from tui_agent.core.sandbox.launch import Launch
from tui_agent.core.network.proxy import PROXY_REFUSED, Attachment, shared_proxy
from tui_agent.core.sandbox.policy import TIER_BUBBLEWRAP, NetworkGrant
from tui_agent.core.sandbox.stopping import RunCgroup, RunProcesses, release, stop_soon
from tui_agent.core.sandbox.toolchain import Toolchain
from tui_agent.core.sandbox.worker_guard import base_filter_fd, run_filter_message

DRAIN_AFTER_EXIT_S = 0.5
BOOTED = b"U"
"""As in worker.py: the first byte on the channel, sent once the sandboxed interpreter started."""
OutputListener = Callable[[bytes], None]
"""Called with each chunk a run writes to its stdout, as it arrives (run_shell's live output)."""


@dataclass
class Outcome:
    """The raw facts of one run, before they become a RunResult."""

    response: dict[str, Any] | None
    stdout: bytes
    stderr: bytes
    stdout_total: int
    stderr_total: int
    exit_code: int | None
    timed_out: bool = False
    cancelled: bool = False
    flooded: bool = False
    protocol_error: str | None = None
    duration_ms: float = 0.0
    start_failed: bool = False
    """The sandbox exited before its interpreter started (bubblewrap refused to start): stderr says why."""


@dataclass
class _Capture:
    cap: int
    data: bytearray = field(default_factory=bytearray)
    total: int = 0
    listener: OutputListener | None = None


class Worker:
    """A started (possibly still booting) sandboxed interpreter that will serve exactly one request."""

    def __init__(self, process: asyncio.subprocess.Process, channel: socket.socket, launch: Launch, token: str,
                 layout: tuple[tuple[str, bool], ...], private_dir: str | None, cgroup: RunCgroup | None,
                 overlay: overlays.OverlayDirs | None = None, net_channel: socket.socket | None = None) -> None:
        self.process = process
        self.channel = channel
        self.launch = launch
        """What it was started as (the warm pool hands it only to a run wanting the same)."""
        self.token = token
        self.layout = layout
        self.private_dirs = private_dir
        self.cgroup = cgroup
        self.processes = RunProcesses(process.pid, cgroup, namespace=launch.tier == TIER_BUBBLEWRAP, token=token)
        """What `stopping` stops: the run's cgroup, its PID namespace, or (weak tier) its session."""
        self.overlay = overlay
        """The overlay folders the project is mounted with (what the run writes lands in its upper folder), or None."""
        self.net_channel = net_channel
        """Where the worker hands over its proxy listener (bubblewrap with a network grant), or None."""
        self.seccomp: dict[str, Any] | None = None
        """The run's seccomp filter built ahead for this worker (worker_guard.run_filter_message), sent with its request."""
        self.used = False
        self._cancelled = False
        self._done = asyncio.Event()

    @classmethod
    async def spawn(cls, project: Path, launch: Launch, *, scratch: Path, processes: int,
                    toolchain: Toolchain | None = None, overlay: overlays.OverlayDirs | None = None) -> "Worker":
        """Start a worker as `launch` says (`launch.py` builds its command line); `overlay`: the folders of its
        overlay mount when `launch.overlay`."""
        # before the command line: a path made meanwhile makes it stale
        layout = launch_path.project_layout(project, launch.project_writable)
        parent_end, child_end = socket.socketpair()
        token = secrets.token_hex(8)
        strong = launch.tier == TIER_BUBBLEWRAP
        base_filter = base_filter_fd(launch.network) if strong else None
        net_host, net_child = socket.socketpair() if launch.network and strong else (None, None)
        cgroup: RunCgroup | None = None
        try:
            fd = child_end.fileno()
            passed = tuple(f for f in (fd, base_filter, net_child.fileno() if net_child else None) if f is not None)
            cgroup = RunCgroup.create(f"tuiagent-{os.getpid()}-{token}", processes)
            started = launch_path.command(project, launch, token=token, scratch=scratch, channel_fd=fd,
                                          toolchain=toolchain, seccomp_fd=base_filter,
                                          net_fd=net_child.fileno() if net_child is not None else None,
                                          overlay=overlay, cgroup_procs=tuple(cgroup.procs_files) if cgroup else ())
            process = await asyncio.create_subprocess_exec(
                *started.argv, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, pass_fds=passed, env=started.env, cwd=str(project),
                start_new_session=True,
            )
        except BaseException:
            if net_host is not None:
                net_host.close()
            if cgroup is not None:
                cgroup.remove()
            raise
        finally:
            child_end.close()
            if net_child is not None:
                net_child.close()
            if base_filter is not None:
                os.close(base_filter)
        parent_end.setblocking(False)
        worker = cls(process, parent_end, launch, token, layout, started.private_dir, cgroup, overlay, net_host)
        if not launch.serve:  # its run's filter, built now rather than by the worker once the request comes: process 1
            # of its pid namespace in its own session under bubblewrap; a child of this process leading its group without
            worker.seccomp = run_filter_message(launch.network, *((-1, 1) if strong else (os.getpid(), process.pid)))
        return worker

    @property
    def alive(self) -> bool:
        return self.process.returncode is None

    async def run(self, request: dict[str, Any], *, timeout_s: float, output_bytes: int,
                  processes: int, bridge: SandboxBridge | None = None, on_output: OutputListener | None = None) -> Outcome:
        """Send the request, wait for the result, the exit and the output; kill the tree on timeout."""
        self.used = True
        if self.cgroup is not None:
            self.cgroup.set_limit(processes)
        started = time.perf_counter()
        flood_limit = max(16 * 1024 * 1024, output_bytes * 64)
        flooded = asyncio.Event()
        out, err = _Capture(output_bytes, listener=on_output), _Capture(output_bytes)
        assert self.process.stdout is not None and self.process.stderr is not None
        readers = [
            asyncio.create_task(_drain(self.process.stdout, out, flood_limit, flooded)),
            asyncio.create_task(_drain(self.process.stderr, err, flood_limit, flooded)),
        ]
        booted = await self._await_boot(timeout_s)
        if booted is not True:
            return await self._unstarted(readers, out, err, flooded, timed_out=booted is None, started=started)
        proxy = await self._attach_proxy(request)
        try:
            outcome = await self._serve(request, bridge, readers, out, err, flooded, timeout_s, started)
        finally:
            if proxy is not None:
                await proxy.close()
        if proxy is not None and proxy.refusals:
            lines = "".join(f"{PROXY_REFUSED}{line}\n" for line in proxy.refusals)
            outcome.stderr += lines.encode()
        return outcome

    async def _attach_proxy(self, request: dict[str, Any]) -> Attachment | None:
        """Serve the run's proxy listener (handed over before the worker announced itself) under its grant."""
        if self.net_channel is None:
            return None
        channel, self.net_channel = self.net_channel, None
        try:
            channel.setblocking(False)
            _data, fds, _flags, _address = socket.recv_fds(channel, 1, 1)
        except OSError:
            return None  # no listener: the run simply has no way out
        finally:
            channel.close()
        if not fds:
            return None
        listener = socket.socket(fileno=fds[0])
        for extra in fds[1:]:
            os.close(extra)
        raw = request.get("policy", {}).get("network")
        grant: NetworkGrant = tuple(str(name) for name in raw) if isinstance(raw, list) else bool(raw)
        return await shared_proxy().attach(listener, grant)

    async def _serve(self, request: dict[str, Any], bridge: SandboxBridge | None, readers: list[asyncio.Task[None]],
                     out: _Capture, err: _Capture, flooded: asyncio.Event, timeout_s: float,
                     started: float) -> Outcome:
        """Hand the booted worker its request and collect the outcome."""
        loop = asyncio.get_running_loop()
        protocol_error: str | None = None
        result_task = asyncio.create_task(read_result(self.channel, keep_on_reset=True) if bridge is None
                                          else serve_channel(self.channel, bridge))
        try:
            # bubblewrap: this process is its PID namespace's init, whose exit ends every process of the run; on the
            # weak tier the worker still ends its descendants (they may hold its output pipes past its exit)
            sent = {**request, "bounded": self.launch.tier == TIER_BUBBLEWRAP}
            if self.seccomp is not None:
                sent["seccomp"] = self.seccomp
            await loop.sock_sendall(self.channel, (json.dumps(sent) + "\n").encode())
        except OSError as exc:
            protocol_error = f"the sandboxed worker did not take the request: {exc}"
        waiter = asyncio.create_task(self.process.wait())
        flood_waiter = asyncio.create_task(flooded.wait())
        left = max(0.0, timeout_s - (time.perf_counter() - started))  # the boot counts against the timeout
        done, _pending = await asyncio.wait({waiter, flood_waiter}, timeout=left, return_when=asyncio.FIRST_COMPLETED)
        timed_out = not done
        if timed_out or flooded.is_set() or self._cancelled:
            await self.kill()
        await waiter
        flood_waiter.cancel()
        await release(self.processes)  # leftovers die before the pipes and the channel are drained
        try:
            await asyncio.wait_for(asyncio.gather(*readers), DRAIN_AFTER_EXIT_S)
        except asyncio.TimeoutError:  # a descendant holds the pipes open: keep what was read so far
            pass
        try:
            raw = await asyncio.wait_for(result_task, DRAIN_AFTER_EXIT_S)
        except (asyncio.TimeoutError, OSError):  # OSError: the worker died with the channel half-read
            raw = b""
        self.channel.close()
        response, malformed = decode_result(raw)
        protocol_error = malformed or protocol_error
        self._done.set()
        return Outcome(
            response=response, stdout=bytes(out.data), stderr=bytes(err.data),
            stdout_total=out.total, stderr_total=err.total, exit_code=self.process.returncode,
            timed_out=timed_out, cancelled=self._cancelled, flooded=flooded.is_set(),
            protocol_error=protocol_error, duration_ms=(time.perf_counter() - started) * 1000,
        )

    async def _await_boot(self, timeout_s: float) -> bool | None:
        """True once the sandboxed interpreter announced itself; False when the sandbox exited (or was killed)
        first; None when neither happened within `timeout_s`."""
        loop = asyncio.get_running_loop()
        announced = asyncio.ensure_future(loop.sock_recv(self.channel, len(BOOTED)))
        exited = asyncio.ensure_future(self.process.wait())
        try:
            done, _pending = await asyncio.wait({announced, exited}, timeout=timeout_s,
                                                return_when=asyncio.FIRST_COMPLETED)
            if not done:
                return None
            if announced not in done:  # it exited: a byte it sent before is already there
                await asyncio.wait({announced}, timeout=DRAIN_AFTER_EXIT_S)
            if announced.done() and not announced.cancelled() and announced.exception() is None:
                return announced.result() == BOOTED
            return False
        finally:
            announced.cancel()
            exited.cancel()

    async def _unstarted(self, readers: list[asyncio.Task[None]], out: _Capture, err: _Capture,
                         flooded: asyncio.Event, *, timed_out: bool, started: float) -> Outcome:
        """The outcome of a run whose sandbox never started its interpreter (or took longer than the timeout)."""
        if self.net_channel is not None:
            self.net_channel.close()
            self.net_channel = None
        await self.kill()
        await self.process.wait()
        await release(self.processes)
        try:
            await asyncio.wait_for(asyncio.gather(*readers), DRAIN_AFTER_EXIT_S)
        except asyncio.TimeoutError:
            pass
        self.channel.close()
        self._done.set()
        return Outcome(
            response=None, stdout=bytes(out.data), stderr=bytes(err.data), stdout_total=out.total,
            stderr_total=err.total, exit_code=self.process.returncode, timed_out=timed_out,
            cancelled=self._cancelled, flooded=flooded.is_set(), start_failed=not (timed_out or self._cancelled),
            duration_ms=(time.perf_counter() - started) * 1000,
        )

    async def kill(self) -> None:
        """SIGKILL every process of the run (`stopping.py`: its cgroup, its namespace, or its session)."""
        await stop_soon(self.processes, leader_alive=self.process.returncode is None)

    async def cancel(self) -> None:
        self._cancelled = True
        await self.kill()

    async def release(self) -> None:
        """Once the worker exited: nothing it started outlives it, and its cgroup is removed."""
        await self.process.wait()
        await release(self.processes)

    async def discard(self) -> None:
        """Kill an unused worker and release its channel."""
        await self.kill()
        try:
            await self.process.wait()
        finally:
            self.channel.close()
            await release(self.processes)
            if self.net_channel is not None:
                self.net_channel.close()
            if self.overlay is not None:
                self.overlay.remove()


async def read_result(channel: socket.socket, *, keep_on_reset: bool) -> bytes:
    """A run's answer from its channel until it closes (b"" when over RESULT_LIMIT). A reset connection (the process
    died mid-write) ends the read with what came so far when `keep_on_reset` (a fresh worker's), else raises OSError
    (a forked run's: its caller takes that as no answer)."""
    loop = asyncio.get_running_loop()
    chunks: list[bytes] = []
    size = 0
    while size <= RESULT_LIMIT:
        try:
            chunk = await loop.sock_recv(channel, 65536)
        except OSError:
            if not keep_on_reset:
                raise
            break
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks) if size <= RESULT_LIMIT else b""


def decode_result(raw: bytes) -> tuple[dict[str, Any] | None, str | None]:
    """The result a worker sent (None when it sent nothing), or why what it sent is not one."""
    if not raw:
        return None, None
    try:
        decoded = json.loads(raw)
    except ValueError:
        return None, "the result channel carried malformed data"
    if not isinstance(decoded, dict):
        return None, "the result channel carried something other than a result"
    return decoded, None


async def _drain(stream: asyncio.StreamReader, capture: _Capture, flood_limit: int, flooded: asyncio.Event) -> None:
    while True:
        chunk = await stream.read(65536)
        if not chunk:
            return
        capture.total += len(chunk)
        if capture.listener is not None and not tell(partial(capture.listener, chunk), "live output view"):
            capture.listener = None  # a failing live view must not fail the run: it stops hearing of it
        room = capture.cap - len(capture.data)
        if room > 0:
            capture.data += chunk[:room]
        if capture.total > flood_limit:
            flooded.set()
