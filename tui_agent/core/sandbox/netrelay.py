"""Inside the sandbox (stdlib only, run by the worker as process 1 before any agent code): open the proxy's listener
on the sandbox's own loopback and hand it to the host, which serves it (network/proxy.py says why no relay runs inside).

It uses `_socket` alone: the `socket` module's enum set-up costs a call 10-30 ms on a busy machine."""

from __future__ import annotations

import os
import struct

import _socket


def hand_over_listener(handover_fd: int, port: int) -> None:
    """Listen on 127.0.0.1:`port` of this network namespace, pass the socket over `handover_fd` and keep no copy."""
    listener = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
    try:
        listener.setsockopt(_socket.SOL_SOCKET, _socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", port))
        listener.listen(128)
        channel = _socket.socket(fileno=os.dup(handover_fd))
        try:
            channel.sendmsg([b"L"], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, struct.pack("i", listener.fileno()))])
        finally:
            channel.close()
    finally:
        listener.close()
        os.close(handover_fd)


def hand_over_from_argv(argv: list[str]) -> None:
    """Hand over the listener a `net=FD:PORT` argument of the worker asks for (none without one)."""
    for arg in argv:
        if arg.startswith("net="):
            fd, _, port = arg[4:].partition(":")
            hand_over_listener(int(fd), int(port))
