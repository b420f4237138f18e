"""The host-side proxy, a sandboxed run's only way out: HTTP CONNECT, HTTP and SOCKS5 to what its grant reaches.

Every bubblewrap run has a network namespace holding only `lo`. For a run with a grant the worker, as process 1 and
before any agent code, opens a TCP listener on 127.0.0.1:PROXY_PORT there and hands it to the host over a socketpair
(the sandbox's worker.py); this proxy accepts on it from the host's namespace, in its own thread and event loop
started on first use, and resolves names itself (policy.py decides; never DNS inside). Not a unix socket bound in
with a relay inside (Claude Code's and Codex's shape): the base seccomp filter bubblewrap installs refuses
socket(AF_UNIX) before the sandbox's first process exists, and a listener handed out once needs no relay at all.

What it cannot see: inside a CONNECT tunnel (HTTPS) the TLS server name and the HTTP Host are the client's, so a
server at a granted name's address that also serves other names (a CDN) can be asked for those (domain fronting).
Plain HTTP requests are sent with the Host the grant was checked for.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import socket
import struct
import threading
from collections.abc import Coroutine
from typing import Any

from tui_agent.core.hostnames import Grant
from tui_agent.core.network.policy import NetPolicy, Refused

PROXY_PORT = 3128
"""The proxy's port on the sandbox's own loopback (its namespace is empty, so the port is always free)."""
PROXY_REFUSED = "tuiagent network proxy refused: "
"""How each refused destination is told after the run's own stderr (one line each, the reason after it)."""
HEAD_LIMIT = 64 * 1024
HEAD_TIMEOUT_S = 30.0
MAX_CONNECTIONS = 256
"""Connections one run may hold open through the proxy at once."""
CONNECT_TIMEOUT_S = 15.0
_HOP_HEADERS = {"proxy-connection", "proxy-authorization", "connection", "keep-alive"}


def proxy_env() -> dict[str, str]:
    """The variables that make pip, git, curl and Python's urllib go through the proxy inside the sandbox."""
    url = f"http://127.0.0.1:{PROXY_PORT}"
    env = {name: url for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")}
    env.update(NO_PROXY="localhost,127.0.0.1,::1", no_proxy="localhost,127.0.0.1,::1")
    return env


def refusal(reason: str) -> bytes:
    body = (reason.replace("\r", " ").replace("\n", " ") + "\n").encode()
    return (b"HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n"
            b"X-Tuiagent-Refused: " + body.strip() + b"\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n"
            + body)


async def open_checked(policy: NetPolicy, host: str, port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A connection to `host`:`port` once the grant allows the name and every address it resolves to."""
    last: OSError | None = None
    for address in await asyncio.to_thread(policy.resolve, host, port):
        try:
            return await asyncio.wait_for(asyncio.open_connection(address, port), CONNECT_TIMEOUT_S)
        except (OSError, asyncio.TimeoutError) as exc:
            last = exc if isinstance(exc, OSError) else OSError(f"timed out connecting to {address}")
    raise ConnectionError(f"cannot connect to {host}:{port}: {last}")


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        with contextlib.suppress(OSError, asyncio.IncompleteReadError):
            while chunk := await reader.read(65536):
                writer.write(chunk)
                await writer.drain()
    finally:
        with contextlib.suppress(OSError, RuntimeError):
            if writer.can_write_eof():
                writer.write_eof()


async def _splice(client: tuple[asyncio.StreamReader, asyncio.StreamWriter],
                  remote: tuple[asyncio.StreamReader, asyncio.StreamWriter]) -> None:
    try:
        await asyncio.gather(_pipe(client[0], remote[1]), _pipe(remote[0], client[1]))
    finally:
        remote[1].close()


def split_target(target: str, default_port: int) -> tuple[str, int]:
    """`host:port`, `[v6]:port` or a bare host into (host, port); ValueError when malformed."""
    if target.startswith("["):
        host, _, rest = target[1:].partition("]")
        port = int(rest[1:]) if rest.startswith(":") else default_port
    elif target.count(":") == 1:
        host, raw = target.split(":")
        port = int(raw)
    else:
        host, port = target, default_port
    if not host or not 0 < port < 65536:
        raise ValueError(target)
    return host, port


def _forward_head(lines: list[str], authority: str, path: str) -> bytes:
    """The request head for the origin: origin-form target, the Host the grant was checked for (never another name
    the same server also answers for), no proxy or hop headers, one request per connection."""
    method, _target, version = lines[0].split(" ", 2)
    dropped = _HOP_HEADERS | {"host"}
    kept = [line for line in lines[1:] if line and line.split(":", 1)[0].strip().lower() not in dropped]
    return "\r\n".join([f"{method} {path} {version}", f"Host: {authority}", *kept, "Connection: close", "", ""]
                       ).encode("latin-1")


async def _http(policy: NetPolicy, first: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    head = first + await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), HEAD_TIMEOUT_S)
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3:
        raise Refused("not an HTTP proxy request")
    method, target, _version = parts
    if method.upper() == "CONNECT":
        host, port = split_target(target, 443)
        remote = await open_checked(policy, host, port)
        writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        await _splice((reader, writer), remote)
        return
    if not target.lower().startswith("http://"):
        raise Refused("only http:// URLs are forwarded; use CONNECT (HTTPS_PROXY) for https")
    authority, slash, rest = target[7:].partition("/")
    authority = authority.rpartition("@")[2]
    host, port = split_target(authority, 80)
    remote = await open_checked(policy, host, port)
    remote[1].write(_forward_head(lines, authority, slash + rest or "/"))
    await _splice((reader, writer), remote)


async def _socks5(policy: NetPolicy, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """SOCKS5 CONNECT without authentication; the name is resolved here (socks5h), an address is checked as given."""
    count = (await reader.readexactly(1))[0]
    await reader.readexactly(count)
    writer.write(b"\x05\x00")
    version, command, _reserved, kind = await reader.readexactly(4)
    if kind == 1:
        host = str(ipaddress.IPv4Address(await reader.readexactly(4)))
    elif kind == 4:
        host = str(ipaddress.IPv6Address(await reader.readexactly(16)))
    elif kind == 3:
        host = (await reader.readexactly((await reader.readexactly(1))[0])).decode("idna")
    else:
        raise ValueError("unknown SOCKS5 address type")
    port = struct.unpack("!H", await reader.readexactly(2))[0]
    if version != 5 or command != 1:
        writer.write(b"\x05\x07\x00\x01" + bytes(6))
        return
    try:
        remote = await open_checked(policy, host, port)
    except Refused:
        writer.write(b"\x05\x02\x00\x01" + bytes(6))  # "connection not allowed by ruleset"
        raise
    except ConnectionError:
        writer.write(b"\x05\x05\x00\x01" + bytes(6))  # "connection refused"
        return
    writer.write(b"\x05\x00\x00\x01" + bytes(6))
    await _splice((reader, writer), remote)


class Attachment:
    """One run's proxy: its listener, its grant and its open connections, all closed with `close()`."""

    def __init__(self, proxy: "NetProxy", listener: socket.socket, grant: Grant) -> None:
        self.proxy = proxy
        self.listener = listener
        self.policy = NetPolicy(grant)
        self.refusals: list[str] = []
        """One line per refused destination, in order (what the run is told)."""
        self._server: asyncio.base_events.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, sock=self.listener, limit=HEAD_LIMIT)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        first = b""
        try:
            if len(self._tasks) > MAX_CONNECTIONS:
                raise Refused(f"more than {MAX_CONNECTIONS} connections at once")
            first = await asyncio.wait_for(reader.readexactly(1), HEAD_TIMEOUT_S)
            if first == b"\x05":
                await _socks5(self.policy, reader, writer)
            else:
                await _http(self.policy, first, reader, writer)
        except Refused as refused:
            self.refusals.append(str(refused))
            if first != b"\x05":  # a SOCKS5 client was answered in its own protocol
                with contextlib.suppress(OSError):
                    writer.write(refusal(str(refused)))
        except (ConnectionError, ValueError, UnicodeError, asyncio.TimeoutError, asyncio.IncompleteReadError,
                asyncio.LimitOverrunError) as exc:
            if first not in (b"", b"\x05") and not isinstance(exc, asyncio.IncompleteReadError):
                with contextlib.suppress(OSError):
                    writer.write(b"HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
        finally:
            self._tasks.discard(task)
            with contextlib.suppress(OSError, RuntimeError):
                writer.close()

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        self.listener.close()

    async def close(self) -> None:
        """Stop accepting and drop every connection of the run (from any event loop)."""
        await self.proxy.call(self.stop())


class NetProxy:
    """The proxy's own thread and event loop, shared by every run with a grant."""

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="tuiagent-netproxy", daemon=True)
        self._thread.start()

    async def call(self, coroutine: Coroutine[Any, Any, None]) -> None:
        """Run `coroutine` on the proxy's loop and wait for it from the caller's loop."""
        await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coroutine, self._loop))

    async def attach(self, listener: socket.socket, grant: Grant) -> Attachment:
        """Start serving a run's listener under its grant."""
        listener.setblocking(False)
        attachment = Attachment(self, listener, grant)
        await self.call(attachment.start())
        return attachment


_shared: list[NetProxy] = []
_shared_lock = threading.Lock()


def shared_proxy() -> NetProxy:
    """The process's proxy, started on first use (runs without a grant never start it)."""
    with _shared_lock:
        if not _shared:
            _shared.append(NetProxy())
        return _shared[0]
