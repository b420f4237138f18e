"""A sandboxed run's processes from the host, the one place they are started and stopped: the fresh worker that runs
one request, the collector of its outcome (answering run_python's MCP requests on the way), and its stop."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from tui_agent.core.errors import TuiAgentError
from tui_agent.core.listeners import tell
from tui_agent.core.sandbox import launch as launch_path
from tui_agent.core.sandbox.launch import Launch, OverlayDirs
from tui_agent.core.network.proxy import PROXY_REFUSED, Attachment, shared_proxy
from tui_agent.core.sandbox.policy import TIER_BUBBLEWRAP, NetworkGrant, Outcome, SandboxBridge
from tui_agent.core.sandbox.stopping import RunCgroup, kill_namespace, kill_process, kill_tree
from tui_agent.core.sandbox.toolchain import Toolchain
from tui_agent.core.sandbox.worker_guard import base_filter_fd, run_filter_message

DRAIN_AFTER_EXIT_S = 0.5
RESULT_LIMIT = 8 * 1024 * 1024
LINE_LIMIT = 1024 * 1024
MAX_CALLS_PER_RUN = 200
BOOTED = b"U"
"""As in worker.py: the first byte on the channel, sent once the sandboxed interpreter started."""
OutputListener = Callable[[bytes], None]
"""Called with each chunk a run writes to its stdout, as it arrives (run_shell's live output)."""


class Capture:
    """A run's stdout and stderr read as they come: the first `cap` bytes of each kept, every byte counted, `flooded`
    set past the flood limit (the run is then killed); `on_output` hears stdout live."""

    def __init__(self, streams: tuple[asyncio.StreamReader, asyncio.StreamReader], cap: int,
                 on_output: OutputListener | None) -> None:
        self.cap = cap
        self.kept = (bytearray(), bytearray())
        self.totals = [0, 0]
        self.flooded = asyncio.Event()
        self._limit = max(16 * 1024 * 1024, cap * 64)
        self._listener = on_output
        self._readers = [asyncio.create_task(self._read(stream, index)) for index, stream in enumerate(streams)]

    async def _read(self, stream: asyncio.StreamReader, index: int) -> None:
        while chunk := await stream.read(65536):
            self.totals[index] += len(chunk)
            if index == 0 and self._listener is not None and not tell(partial(self._listener, chunk), "live output view"):
                self._listener = None  # a failing live view must not fail the run: it stops hearing of it
            self.kept[index].extend(chunk[:self.cap - len(self.kept[index])])
            if self.totals[index] > self._limit:
                self.flooded.set()

    async def drain(self) -> None:
        """Once the run exited: the rest of its output (a descendant holding the pipes open: what was read so far)."""
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.gather(*self._readers), DRAIN_AFTER_EXIT_S)


async def collect(run: Worker, sent: dict[str, Any] | None, capture: Capture, *, timeout_s: float, started: float,
                  bridge: SandboxBridge | None) -> Outcome:
    """Hand `sent` to the run (None: it never started, it is killed) and gather its outcome: it is killed on a timeout,
    a flood or a cancel, what it left is killed before its output is drained and its result read."""
    loop = asyncio.get_running_loop()
    protocol_error: str | None = None
    result: asyncio.Future[bytes] = loop.create_future()
    if sent is None:
        result.set_result(b"")
    else:
        result = asyncio.ensure_future(read_result(run.channel, bridge=bridge))
        try:
            await loop.sock_sendall(run.channel, (json.dumps(sent) + "\n").encode())
        except OSError as error:
            protocol_error = f"the sandboxed worker did not take the request: {error}"
    exited = asyncio.ensure_future(run.process.wait())
    flood = asyncio.ensure_future(capture.flooded.wait())
    try:
        if sent is None or run.cancelled:  # it never started, or was cancelled while it was handed over
            await run.kill()
        done, _pending = await asyncio.wait({exited, flood}, timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED)
        if not done or capture.flooded.is_set() or run.cancelled:
            await run.kill()
        exit_code = await exited
        flood.cancel()
        await run.release()  # leftovers die before the pipes and the channel are drained
        await capture.drain()
        try:
            raw = await asyncio.wait_for(result, DRAIN_AFTER_EXIT_S)
        except asyncio.TimeoutError:
            raw = b""
    except BaseException:
        # End the reads before the channel is closed: a closed socket with a pending read stays registered with the
        # event loop, and the next socket given its descriptor number (another run's) would never wake.
        for task in (result, exited, flood):
            task.cancel()
        await asyncio.shield(asyncio.gather(result, exited, flood, return_exceptions=True))
        raise
    response, malformed = decode_result(raw)
    return Outcome(response=response, stdout=bytes(capture.kept[0]), stderr=bytes(capture.kept[1]),
                   stdout_total=capture.totals[0], stderr_total=capture.totals[1], exit_code=exit_code,
                   timed_out=not done, cancelled=run.cancelled, flooded=capture.flooded.is_set(),
                   protocol_error=malformed or protocol_error, duration_ms=(time.perf_counter() - started) * 1000)


async def read_result(channel: socket.socket, *, bridge: SandboxBridge | None = None) -> bytes:
    """A run's answer from its channel until it closes (b"" when over RESULT_LIMIT). A reset connection (the process
    died mid-write) ends the read with what came so far.

    With a `bridge` (run_python's MCP tools), lines before the answer may be requests
    `{"bridge": {"tool": NAME, "arguments": {...}}}`; each is answered with one line `{"ok": true, "value": ...}` or
    `{"ok": false, "error": "..."}`. Only the tools the bridge offers can be named, arguments must be a JSON object,
    lines and calls per run are bounded, and the bridge applies the session's permissions. Everything the snippet
    sends is treated as hostile input."""
    loop = asyncio.get_running_loop()
    received = bytearray()
    calls = 0
    while len(received) <= RESULT_LIMIT:
        if bridge is not None and (newline := received.find(b"\n")) >= 0:
            request = _bridge_request(bytes(received[:newline]))
            if request is None:
                bridge = None  # the answer line: what follows is the rest of it, never a request
                continue
            del received[:newline + 1]
            calls += 1
            reply = await _answer(bridge, request, calls)
            try:
                await loop.sock_sendall(channel, (json.dumps(reply, default=str) + "\n").encode())
            except OSError:
                return b""
            continue
        try:
            chunk = await loop.sock_recv(channel, 65536)
        except OSError:
            break
        if not chunk:
            break
        received += chunk
    return bytes(received) if len(received) <= RESULT_LIMIT else b""


def _bridge_request(line: bytes) -> Any:
    """A request line's request (`{}` when it is malformed), or None: not a request."""
    if len(line) > LINE_LIMIT or not line.startswith(b'{"bridge"'):
        return None
    try:
        decoded = json.loads(line)
    except ValueError:
        return {}
    return decoded.get("bridge", {}) if isinstance(decoded, dict) else {}


async def _answer(bridge: SandboxBridge, request: Any, calls: int) -> dict[str, Any]:
    if calls > MAX_CALLS_PER_RUN:
        return {"ok": False, "error": f"more than {MAX_CALLS_PER_RUN} MCP calls in one run_python snippet"}
    name = request.get("tool") if isinstance(request, dict) else None
    arguments = request.get("arguments", {}) if isinstance(request, dict) else None
    if not isinstance(name, str) or name not in bridge.modules():
        return {"ok": False, "error": f"no MCP tool named {name!r} is offered to this run"}
    if not isinstance(arguments, dict):
        return {"ok": False, "error": "arguments must be keyword arguments (a JSON object)"}
    try:
        value = await bridge.call(name, arguments)
    except (TuiAgentError, LookupError, OSError, RuntimeError, ValueError) as error:  # the tool's own error
        # (RuntimeError), a refusal (PermissionError), a dead server (McpServerError): the snippet gets the message
        return {"ok": False, "error": str(error) or type(error).__name__}
    try:
        text = json.dumps({"ok": True, "value": value})
    except (TypeError, ValueError):
        return {"ok": True, "value": repr(value)}
    if len(text) > RESULT_LIMIT:
        return {"ok": False, "error": f"the result of {name} is over {RESULT_LIMIT // (1024 * 1024)} MB"}
    return {"ok": True, "value": value}


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


@dataclass(eq=False)
class Worker:
    """A started (possibly still booting) sandboxed interpreter that will serve exactly one request."""

    process: asyncio.subprocess.Process
    channel: socket.socket
    launch: Launch
    """What it was started as (the warm pool hands it only to a run wanting the same)."""
    layout: tuple[str, ...]
    private_dir: str | None
    cgroup: RunCgroup | None
    """The run's own cgroup (`stopping.py`), when the machine lets tuiagent make one."""
    token: str
    """The run's name: its cgroup's, and the marker in the weak tier's environment (`stopping.kill_tree`)."""
    overlay: OverlayDirs | None = None
    """The overlay folders the project is mounted with (what the run writes lands in its upper folder), or None."""
    net_channel: socket.socket | None = None
    """Where the worker hands over its proxy listener (bubblewrap with a network grant), or None."""
    seccomp: dict[str, Any] | None = None
    """The run's seccomp filter built ahead for this worker (worker_guard.run_filter_message), sent with its request."""
    cancelled: bool = False

    @classmethod
    async def spawn(cls, project: Path, launch: Launch, *, scratch: Path, processes: int,
                    toolchain: Toolchain | None = None, overlay: OverlayDirs | None = None) -> "Worker":
        """Start a worker as `launch` says (`launch.py` builds its command line); `overlay`: the folders of its
        overlay mount when `launch.overlay`."""
        # before the command line, the same binds: a path made meanwhile makes it stale
        layout = launch_path.project_layout(project, launch)
        parent_end, child_end = socket.socketpair()
        token = secrets.token_hex(8)
        strong = launch.tier == TIER_BUBBLEWRAP
        base_filter = base_filter_fd(launch.network) if strong else None
        net_host, net_child = socket.socketpair() if launch.network and strong else (None, None)
        net_fd = net_child.fileno() if net_child is not None else None
        cgroup: RunCgroup | None = None
        try:
            cgroup = RunCgroup.create(f"tuiagent-{os.getpid()}-{token}", processes)
            started = launch_path.command(project, launch, token=token, scratch=scratch, channel_fd=child_end.fileno(),
                                          toolchain=toolchain, seccomp_fd=base_filter, net_fd=net_fd, overlay=overlay,
                                          cgroup_procs=tuple(cgroup.procs_files) if cgroup else (), layout=layout)
            process = await asyncio.create_subprocess_exec(
                *started.argv, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, pass_fds=[fd for fd in (child_end.fileno(), base_filter, net_fd)
                                                          if fd is not None],
                env=started.env, cwd=str(project), start_new_session=True)
        except BaseException:
            if net_host is not None:
                net_host.close()
            if cgroup is not None:
                cgroup.remove()
            raise
        finally:
            for end in (child_end, net_child):
                if end is not None:
                    end.close()
            if base_filter is not None:
                os.close(base_filter)
        parent_end.setblocking(False)
        # its run's filter, built now rather than by the worker once the request comes: process 1 of its pid namespace in
        # its own session under bubblewrap; a child of this process leading its group without
        seccomp = run_filter_message(launch.network, *((-1, 1) if strong else (os.getpid(), process.pid)))
        return cls(process, parent_end, launch, layout, started.private_dir, cgroup, token, overlay, net_host, seccomp)

    @property
    def alive(self) -> bool:
        return self.process.returncode is None

    async def run(self, request: dict[str, Any], *, timeout_s: float, output_bytes: int,
                  processes: int, bridge: SandboxBridge | None = None, on_output: OutputListener | None = None) -> Outcome:
        """Send the request, wait for the result, the exit and the output; kill the tree on timeout."""
        if self.cgroup is not None:
            self.cgroup.set_limit(processes)
        started = time.perf_counter()
        assert self.process.stdout is not None and self.process.stderr is not None
        capture = Capture((self.process.stdout, self.process.stderr), output_bytes, on_output)
        booted = await self.await_boot(timeout_s)
        net, self.net_channel = self.net_channel, None
        proxy = await _attach_proxy(net, request) if net is not None and booted else None
        sent = {**request, **({"seccomp": self.seccomp} if self.seccomp is not None else {})}
        try:
            outcome = await collect(self, sent if booted else None, capture, bridge=bridge,
                                    timeout_s=max(0.0, timeout_s - (time.perf_counter() - started)), started=started)
        finally:
            for channel in (self.channel, net):
                if channel is not None:
                    channel.close()
            if proxy is not None:
                await proxy.close()
        if not booted:  # never started its interpreter (or not within the timeout)
            outcome.timed_out = booted is None
            outcome.start_failed = not (outcome.timed_out or outcome.cancelled)
        if proxy is not None and proxy.refusals:
            outcome.stderr += "".join(f"{PROXY_REFUSED}{line}\n" for line in proxy.refusals).encode()
        return outcome

    async def await_boot(self, timeout_s: float) -> bool | None:
        """True once the sandboxed interpreter announced itself; False when the sandbox exited (or was killed) first;
        None when neither happened within `timeout_s`."""
        loop = asyncio.get_running_loop()
        announced = asyncio.ensure_future(loop.sock_recv(self.channel, len(BOOTED)))
        exited = asyncio.ensure_future(self.process.wait())
        try:
            done, _pending = await asyncio.wait({announced, exited}, timeout=timeout_s,
                                                return_when=asyncio.FIRST_COMPLETED)
            if not done:
                return None
            if announced not in done and self.process.returncode is not None:  # a byte sent before is already there
                await asyncio.wait({announced}, timeout=DRAIN_AFTER_EXIT_S)
            if announced.done() and not announced.cancelled() and announced.exception() is None:
                return announced.result() == BOOTED
            return False
        finally:
            for task in (announced, exited):
                task.cancel()
            await asyncio.gather(announced, exited, return_exceptions=True)  # no read left pending on the channel

    async def kill(self) -> None:
        """SIGKILL every process of the run now, by the strongest way it has (`stopping.py`): its cgroup's
        `cgroup.kill`, else its PID namespace's init, else (the weak tier) a /proc scan, off the event loop. Never
        waits for them to exit: `release` does."""
        alive = self.process.returncode is None  # not reaped yet: its pid cannot have been reused
        if self.cgroup is not None and self.cgroup.kill():
            if alive:
                kill_process(self.process.pid)  # a leader still starting may not have joined its cgroup yet
        elif self.launch.tier == TIER_BUBBLEWRAP:
            if alive:  # else bubblewrap exited after its child, the namespace's init: it is gone already
                await asyncio.to_thread(kill_namespace, self.process.pid)
        else:
            await asyncio.to_thread(kill_tree, self.process.pid, self.token, root_alive=alive)

    async def cancel(self) -> None:
        self.cancelled = True
        await self.kill()

    async def release(self) -> None:
        """Once the worker exited (waited for here): nothing it started outlives it (the weak tier without
        `cgroup.kill`: scanned again), and its cgroup is removed, even when the wait is cancelled."""
        try:
            await self.process.wait()
        finally:
            if self.launch.tier != TIER_BUBBLEWRAP and (self.cgroup is None or self.cgroup.kill_folder is None):
                await asyncio.to_thread(kill_tree, self.process.pid, self.token, root_alive=False)
            if self.cgroup is not None and not self.cgroup.remove_if_empty():
                await asyncio.to_thread(self.cgroup.remove)

    async def discard(self) -> None:
        """Kill an unused worker and release its channels, its cgroup and its overlay."""
        await self.kill()
        try:
            await self.release()
        finally:  # even when cancelled meanwhile (a background discard as the loop closes)
            for channel in (self.channel, self.net_channel):
                if channel is not None:
                    channel.close()
            if self.overlay is not None:
                self.overlay.remove()


async def _attach_proxy(channel: socket.socket, request: dict[str, Any]) -> Attachment | None:
    """Serve the run's proxy listener (handed over before the worker announced itself) under its grant."""
    try:
        channel.setblocking(False)
        _data, fds, _flags, _address = socket.recv_fds(channel, 1, 1)
    except OSError:
        return None  # no listener: the run simply has no way out
    finally:
        channel.close()
    for extra in fds[1:]:
        os.close(extra)
    if not fds:
        return None
    raw = request.get("policy", {}).get("network")
    grant: NetworkGrant = tuple(str(name) for name in raw) if isinstance(raw, list) else bool(raw)
    return await shared_proxy().attach(socket.socket(fileno=fds[0]), grant)
