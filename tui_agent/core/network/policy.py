"""What a network grant reaches (granted names, public addresses, never this host), and web_fetch's GET under it.

A grant is `False` (no network), `True` (any public name) or a tuple of host names, where `*.example.com` stands for
any name below example.com. A name is resolved once, here, on the host; every address it resolves to is checked, and
the connection then goes to a checked address (no second resolution a rebinding name could answer differently).
"""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import ipaddress
import os
import socket
import ssl
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Union

from tui_agent.core.errors import TuiAgentError
from tui_agent.core.hostnames import Grant, describe_grant, name_granted

IPAddress = Union[ipaddress.IPv4Address, ipaddress.IPv6Address]
TEST_PUBLIC_NETS_ENV = "TUIAGENT_TEST_PUBLIC_NETS"
"""TEST ONLY: comma-separated networks (e.g. 198.18.0.0/15) treated as public, so a test can stand up a fake
"internet" host in a network namespace it made itself. Read when a `NetPolicy` is built; never set it otherwise."""
MAX_REDIRECTS = 5
USER_AGENT = "tuiagent-web-fetch"

_CGNAT = ipaddress.ip_network("100.64.0.0/10")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_LOCAL_NAT64 = ipaddress.ip_network("64:ff9b:1::/48")
_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")
_IPV4_TRANSLATED = ipaddress.ip_network("::ffff:0:0:0/96")
_TEREDO = ipaddress.ip_network("2001::/32")


def embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address stands for, where a translator or tunnel would take it: IPv4-mapped,
    IPv4-translated (SIIT), IPv4-compatible (deprecated: `::a.b.c.d`, but not `::` and `::1`), well-known NAT64 and
    6to4 (2002::/16, the address in bits 16-48)."""
    if address.ipv4_mapped is not None or address.sixtofour is not None:
        return address.ipv4_mapped or address.sixtofour
    if address in _NAT64 or address in _IPV4_TRANSLATED or (address in _IPV4_COMPATIBLE and int(address) > 1):
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


class Refused(TuiAgentError):
    """A destination the grant does not allow; the message is the one-line reason the run is told."""


def own_addresses() -> set[IPAddress]:
    """Every address of this machine's interfaces (from /proc: the kernel's local routes and IPv6 address list)."""
    found: set[IPAddress] = set()
    try:
        lines = Path("/proc/net/fib_trie").read_text().splitlines()
    except OSError:
        lines = []
    for previous, line in zip(lines, lines[1:], strict=False):
        if "/32 host LOCAL" in line and previous.strip().startswith("|--"):
            found.add(ipaddress.ip_address(previous.strip()[3:].strip()))
    with contextlib.suppress(OSError, IndexError, ValueError):
        for row in Path("/proc/net/if_inet6").read_text().splitlines():
            raw = row.split()[0]
            found.add(ipaddress.ip_address(":".join(raw[i:i + 4] for i in range(0, 32, 4))))
    return found


class NetPolicy:
    """Checks destinations against one grant; this host's addresses and the test-only public networks are read
    when it is built."""

    def __init__(self, grant: Grant) -> None:
        self.grant = grant
        self.own = own_addresses()
        raw = os.environ.get(TEST_PUBLIC_NETS_ENV, "")
        self.test_public = [ipaddress.ip_network(part.strip()) for part in raw.split(",") if part.strip()]

    def address_refusal(self, address: IPAddress) -> str | None:
        """What kind of address this is when a connection to it is refused ("a loopback address"), or None for a
        public address that is not this machine's."""
        if isinstance(address, ipaddress.IPv6Address):
            if (embedded := embedded_ipv4(address)) is not None:
                return self.address_refusal(embedded)
            for test, what in ((address in _LOCAL_NAT64, "a local-use NAT64 address"),
                               (address in _TEREDO, "a Teredo tunnel address"),
                               (address.is_site_local, "a site-local address")):
                if test:
                    return what
        for test, what in ((address.is_loopback, "a loopback address"), (address.is_unspecified, "the unspecified address"),
                           (address in self.own, "an address of this machine"),
                           (address.is_link_local, "a link-local address"), (address.is_multicast, "a multicast address")):
            if test:
                return what
        if any(address in net for net in self.test_public):
            return None
        if isinstance(address, ipaddress.IPv4Address) and address in _CGNAT:
            return "a carrier-grade NAT (shared) address"
        if address.is_private:
            return "a private address"
        if not address.is_global:
            return "not a public address"
        return None

    def checked_addresses(self, host: str, infos: list[tuple[Any, ...]]) -> list[str]:
        """The addresses `host` resolved to (getaddrinfo rows), once every one of them is allowed."""
        addresses: list[str] = []
        for info in infos:
            text = str(info[4][0]).split("%", 1)[0]
            reason = self.address_refusal(ipaddress.ip_address(text))
            if reason is not None:
                literal = text == host.strip("[]")
                raise Refused(f"{text} is {reason}" if literal else f"{host} resolves to {text}, {reason}")
            if text not in addresses:
                addresses.append(text)
        if not addresses:
            raise Refused(f"{host} does not resolve to any address")
        return addresses

    def resolve(self, host: str, port: int) -> list[str]:
        """Blocking: check the name, resolve it, check every address; the one way a destination is checked."""
        if not name_granted(host, self.grant):
            raise Refused(f"{host} is not in the network grant ({describe_grant(self.grant)})")
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError) as exc:
            raise Refused(f"{host} cannot be resolved ({exc})") from exc
        return self.checked_addresses(host, infos)

    def connect(self, host: str, port: int, timeout_s: float) -> socket.socket:
        """Blocking: a TCP connection to the first checked address of `host` that answers."""
        last: OSError | None = None
        for address in self.resolve(host, port):
            try:
                return socket.create_connection((address, port), timeout_s)
            except OSError as exc:
                last = exc
        raise ConnectionError(f"cannot connect to {host}:{port}: {last}")


@dataclass(frozen=True)
class Fetched:
    """A response: its final URL (after redirects), status, content type and body (cut at the caller's limit)."""

    url: str
    status: int
    content_type: str
    body: bytes
    truncated: bool


def _split(url: str) -> tuple[str, str, int, str]:
    """(scheme, host, port, path with query) of an http(s) URL; Refused for anything else."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise Refused(f"{url!r} is not an http:// or https:// URL")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:
        raise Refused(f"{url!r} has a malformed port") from exc
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return parts.scheme, parts.hostname, port, path


def fetch_sync(url: str, grant: Grant, *, max_bytes: int = 2_000_000, timeout_s: float = 20.0,
               context: ssl.SSLContext | None = None) -> Fetched:
    """GET `url` under `grant`, following redirects (each checked again), on a socket to a checked address; raises
    Refused (a one-line reason) for a destination the grant does not allow, OSError or http.client.HTTPException when
    the server cannot be reached or answers garbage."""
    policy = NetPolicy(grant)
    tls = context or ssl.create_default_context()
    for _hop in range(MAX_REDIRECTS + 1):
        scheme, host, port, path = _split(url)
        raw = policy.connect(host, port, timeout_s)
        secure = scheme == "https"
        connection = (http.client.HTTPSConnection if secure else http.client.HTTPConnection)(host, port)
        with contextlib.closing(raw), contextlib.closing(connection):
            connection.sock = tls.wrap_socket(raw, server_hostname=host) if secure else raw
            connection.request("GET", path, headers={"User-Agent": USER_AGENT, "Accept": "*/*"})
            response = connection.getresponse()
            location = response.getheader("Location")
            if response.status in (301, 302, 303, 307, 308) and location:
                url = urllib.parse.urljoin(url, location)
                continue
            body = response.read(max_bytes + 1)
            return Fetched(url, response.status, response.getheader("Content-Type", ""), body[:max_bytes],
                           len(body) > max_bytes)
    raise Refused(f"more than {MAX_REDIRECTS} redirects from {url}")


async def fetch(url: str, grant: Grant, *, max_bytes: int = 2_000_000, timeout_s: float = 20.0,
                context: ssl.SSLContext | None = None) -> Fetched:
    """`fetch_sync` off the event loop."""
    return await asyncio.to_thread(fetch_sync, url, grant, max_bytes=max_bytes, timeout_s=timeout_s, context=context)
