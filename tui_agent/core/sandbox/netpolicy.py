"""What a network grant lets a sandboxed run reach: granted names only, and only public addresses, never this host.

A grant is `False` (no network), `True` (any public name) or a tuple of host names, where `*.example.com` stands for
any name below example.com. A name is resolved once, here, on the host; every address it resolves to is checked, and
the connection then goes to a checked address (no second resolution a rebinding name could answer differently).
"""

from __future__ import annotations

import ipaddress
import os
import socket
from pathlib import Path
from typing import Any, Union

from tui_agent.core.errors import TuiAgentError
from tui_agent.core.hostnames import describe_grant, name_granted
from tui_agent.core.sandbox.policy import NetworkGrant

IPAddress = Union[ipaddress.IPv4Address, ipaddress.IPv6Address]
TEST_PUBLIC_NETS_ENV = "TUIAGENT_TEST_PUBLIC_NETS"
"""TEST ONLY: comma-separated networks (e.g. 198.18.0.0/15) treated as public, so a test can stand up a fake
"internet" host in a network namespace it made itself. Read when a `NetPolicy` is built; never set it otherwise."""

_CGNAT = ipaddress.ip_network("100.64.0.0/10")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


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
    try:
        for row in Path("/proc/net/if_inet6").read_text().splitlines():
            raw = row.split()[0]
            found.add(ipaddress.ip_address(":".join(raw[i:i + 4] for i in range(0, 32, 4))))
    except (OSError, IndexError, ValueError):
        pass
    return found


class NetPolicy:
    """Checks destinations against one grant; this host's addresses and the test-only public networks are read
    when it is built."""

    def __init__(self, grant: NetworkGrant) -> None:
        self.grant = grant
        self.own = own_addresses()
        raw = os.environ.get(TEST_PUBLIC_NETS_ENV, "")
        self.test_public = [ipaddress.ip_network(part.strip()) for part in raw.split(",") if part.strip()]

    def address_refusal(self, address: IPAddress) -> str | None:
        """What kind of address this is when a connection to it is refused ("a loopback address"), or None for a
        public address that is not this machine's."""
        if isinstance(address, ipaddress.IPv6Address):
            if address.ipv4_mapped is not None:
                return self.address_refusal(address.ipv4_mapped)
            if address in _NAT64:
                return self.address_refusal(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
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

    def check_name(self, host: str) -> None:
        if not name_granted(host, self.grant):
            raise Refused(f"{host} is not in the network grant ({describe_grant(self.grant)})")

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
        """Blocking: check the name, resolve it, check every address (for callers outside an event loop)."""
        self.check_name(host)
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError) as exc:
            raise Refused(f"{host} cannot be resolved ({exc})") from exc
        return self.checked_addresses(host, infos)
