"""No command waits for ever: the exit hang (an event loop idle in select, nothing scheduled) and bounded lock waits."""

from __future__ import annotations

import asyncio
import ctypes
import os
import time
from pathlib import Path

import pytest

from tui_agent.core.sandbox.forkserver import ForkServer
from tui_agent.core.sandbox.tiers import bwrap_path
from tui_agent.core.versioning.writelock import LockTimeout, WriterLock

PIDFD_GETFD = 438  # x86_64 and aarch64 syscall number


def pidfd_getfd(pid: int, fd: int) -> int:
    """A copy of another process's descriptor (Linux 5.6+, needs ptrace rights: root here)."""
    libc = ctypes.CDLL(None, use_errno=True)
    pidfd = os.pidfd_open(pid)
    try:
        got = int(libc.syscall(PIDFD_GETFD, pidfd, fd, 0))
    finally:
        os.close(pidfd)
    if got < 0:
        raise OSError(ctypes.get_errno(), "pidfd_getfd")
    return got


@pytest.mark.skipif(os.geteuid() != 0 or bwrap_path() is None, reason="needs root (pidfd_getfd) and bubblewrap")
async def test_closing_a_fork_server_whose_channel_outlives_it_does_not_hang(repo: Path, tmp_path: Path) -> None:
    """A forked child can keep the server's end of its channel open after the server dies: no EOF ever comes. The
    exit reader's pending `sock_recv` on a socket closed under it never woke (epoll drops closed descriptors), so
    `close()` waited for ever with no timer scheduled: the hang seen at the end of `tuiagent tools list`."""
    server = await ForkServer.start(repo, scratch=tmp_path, processes=64, project_writable=False)
    held: list[int] = []
    assert server.zygote.cgroup is not None
    for pid in sorted(server.zygote.cgroup.members()):  # take a copy of every socket the server side holds
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:"):
                    held.append(pidfd_getfd(pid, int(fd)))
            except OSError:
                continue
    assert held, "no socket found in the fork server's processes"
    try:
        started = time.monotonic()
        await asyncio.wait_for(server.close(), 20)
        assert time.monotonic() - started < 10
    finally:
        for fd in held:
            os.close(fd)


async def test_a_writer_lock_wait_is_bounded_and_names_what_it_waited_for(repo: Path) -> None:
    first, second = WriterLock(repo), WriterLock(repo)
    with first.held():
        with pytest.raises(LockTimeout, match=r"\.agent/cache/writer\.lock.*another tuiagent process"):
            async with second.hold(timeout_s=0.3):
                pass
        with pytest.raises(LockTimeout, match=r"writer\.lock"):
            with second.held(timeout_s=0.3):
                pass
    async with second.hold(timeout_s=0.3):
        pass
