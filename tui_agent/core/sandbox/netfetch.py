"""An HTTP(S) GET made on the host under a network grant (for `web_fetch`): the same name and address checks as the
sandbox's proxy, the connection pinned to the checked address, every redirect checked again."""

from __future__ import annotations

import asyncio
import http.client
import socket
import ssl
import urllib.parse
from dataclasses import dataclass

from tui_agent.core.sandbox.netpolicy import NetPolicy, Refused
from tui_agent.core.sandbox.policy import NetworkGrant

MAX_REDIRECTS = 5
USER_AGENT = "tuiagent-web-fetch"


@dataclass(frozen=True)
class Fetched:
    """A response: its final URL (after redirects), status, content type and body (cut at the caller's limit)."""

    url: str
    status: int
    content_type: str
    body: bytes
    truncated: bool


class _Pinned(http.client.HTTPSConnection):
    """An HTTP or HTTPS connection to a host name whose socket goes to an address checked beforehand."""

    def __init__(self, host: str, port: int, address: str, secure: bool, context: ssl.SSLContext,
                 timeout: float) -> None:
        super().__init__(host, port, timeout=timeout, context=context)
        self.address = address
        self.secure = secure
        self.tls = context

    def connect(self) -> None:
        sock = socket.create_connection((self.address, self.port), self.timeout)
        self.sock = self.tls.wrap_socket(sock, server_hostname=self.host) if self.secure else sock


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


def fetch_sync(url: str, grant: NetworkGrant, *, max_bytes: int = 2_000_000, timeout_s: float = 20.0,
               context: ssl.SSLContext | None = None) -> Fetched:
    """GET `url` under `grant`, following redirects; raises Refused (a one-line reason) for a destination the grant
    does not allow, OSError or http.client.HTTPException when the server cannot be reached or answers garbage."""
    policy = NetPolicy(grant)
    tls = context or ssl.create_default_context()
    for _hop in range(MAX_REDIRECTS + 1):
        scheme, host, port, path = _split(url)
        last: OSError | None = None
        for address in policy.resolve(host, port):
            connection = _Pinned(host, port, address, scheme == "https", tls, timeout_s)
            try:
                connection.request("GET", path, headers={"User-Agent": USER_AGENT, "Accept": "*/*"})
                response = connection.getresponse()
            except OSError as exc:
                connection.close()
                last = exc
                continue
            try:
                location = response.getheader("Location")
                if response.status in (301, 302, 303, 307, 308) and location:
                    url = urllib.parse.urljoin(url, location)
                    break
                body = response.read(max_bytes + 1)
                return Fetched(url, response.status, response.getheader("Content-Type", ""), body[:max_bytes],
                               len(body) > max_bytes)
            finally:
                connection.close()
        else:
            raise last or OSError(f"cannot connect to {host}:{port}")
    raise Refused(f"more than {MAX_REDIRECTS} redirects from {url}")


async def fetch(url: str, grant: NetworkGrant, *, max_bytes: int = 2_000_000, timeout_s: float = 20.0,
                context: ssl.SSLContext | None = None) -> Fetched:
    """`fetch_sync` off the event loop."""
    return await asyncio.to_thread(fetch_sync, url, grant, max_bytes=max_bytes, timeout_s=timeout_s, context=context)
