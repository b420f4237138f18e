"""The seccomp filters libseccomp builds for the sandbox, loaded in a real child process and probed with real calls,
raw syscalls too (a caller may leave the upper half of a 32-bit argument's register zero or sign-extended)."""

from __future__ import annotations

import json
import platform
import subprocess
import sys
from pathlib import Path

import pytest

GUARD = Path(__file__).resolve().parents[1] / "tui_agent" / "core" / "sandbox" / "worker_guard.py"

PROBE = r"""
import ctypes, errno, importlib.util, json, os, socket, sys
spec = importlib.util.spec_from_file_location("guard", sys.argv[1])
guard = importlib.util.module_from_spec(spec)
spec.loader.exec_module(guard)
network = sys.argv[2] == "network"
os.setsid()
child = os.fork()
if child == 0:  # a process of another group, which the filtered process must not signal
    os.setsid()
    os.read(os.pipe()[0], 1)
installed = guard.install_seccomp(guard.run_filter_message(network, os.getppid(), os.getpgrp()))
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long

def raw(number, *args):
    if libc.syscall(ctypes.c_long(number), *(ctypes.c_ulong(arg & 0xFFFFFFFFFFFFFFFF) for arg in args)) < 0:
        raise OSError(ctypes.get_errno(), "refused")

def attempt(action):
    try:
        made = action()
        if hasattr(made, "close"):
            made.close()
        elif isinstance(made, tuple):
            for one in made:
                one.close()
        return "ok"
    except OSError as error:
        return errno.errorcode.get(error.errno, str(error.errno))

nr = {name: guard.libseccomp().resolve_syscall(guard.libseccomp().Arch.NATIVE, name) for name in ("kill", "socket")}
own, other = os.getpgrp(), child
answers = {
    "installed": installed,
    "kill own group": attempt(lambda: os.kill(-own, 0)),
    "kill own group, zero-extended": attempt(lambda: raw(nr["kill"], (-own) & 0xFFFFFFFF, 0)),
    "kill other group": attempt(lambda: os.kill(-other, 0)),
    "kill other group, zero-extended": attempt(lambda: raw(nr["kill"], (-other) & 0xFFFFFFFF, 0)),
    "kill other process": attempt(lambda: os.kill(other, 0)),
    "kill parent": attempt(lambda: os.kill(os.getppid(), 0)),
    "kill parent, upper half set": attempt(lambda: raw(nr["kill"], (1 << 32) | os.getppid(), 0)),
    "kill everything": attempt(lambda: os.kill(-1, 0)),
    "unix socket": attempt(lambda: socket.socket(socket.AF_UNIX)),
    "unix socket, upper half set": attempt(lambda: raw(nr["socket"], (1 << 32) | socket.AF_UNIX, socket.SOCK_STREAM, 0)),
    "netlink socket": attempt(lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW)),
    "inet socket": attempt(lambda: socket.socket(socket.AF_INET)),
    "inet6 socket": attempt(lambda: socket.socket(socket.AF_INET6)),
    "stream pair": attempt(lambda: socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)),
    "datagram pair": attempt(lambda: socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)),
    "new user namespace": attempt(lambda: os.unshare(os.CLONE_NEWUSER) if hasattr(os, "unshare") else raw(
        guard.libseccomp().resolve_syscall(guard.libseccomp().Arch.NATIVE, "unshare"), 0x10000000)),
}
answers["no_new_privs"] = "NoNewPrivs:\t1" in open("/proc/self/status").read()
os.kill(child, 9)
print(json.dumps(answers))
"""


def probe(network: bool) -> dict[str, object]:
    done = subprocess.run([sys.executable, "-I", "-c", PROBE, str(GUARD), "network" if network else "offline"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    answers: dict[str, object] = json.loads(done.stdout)
    return answers


@pytest.mark.skipif(platform.system() != "Linux", reason="seccomp is Linux's")
@pytest.mark.parametrize("network", [False, True])
def test_run_filter_refuses_signals_outside_the_run_and_unix_sockets(network: bool) -> None:
    answers = probe(network)
    assert answers.pop("installed") is True
    assert answers.pop("no_new_privs") is True  # set by libseccomp before it loads the filter
    inet = "ok" if network else "EPERM"
    assert answers == {
        "kill own group": "ok",
        "kill own group, zero-extended": "ok",  # compared on the low 32 bits, as the kernel reads a pid_t
        "kill other group": "EPERM",
        "kill other group, zero-extended": "EPERM",
        "kill other process": "ok",  # a pid, not a group: the pid namespace and the cgroup keep it inside
        "kill parent": "EPERM",
        "kill parent, upper half set": "EPERM",
        "kill everything": "EPERM",
        "unix socket": "EPERM",
        "unix socket, upper half set": "EPERM",
        "netlink socket": "EPERM",
        "inet socket": inet,
        "inet6 socket": inet,
        "stream pair": "ok",
        "datagram pair": "EPERM",
        "new user namespace": "EPERM",
    }


def test_every_refused_call_is_known_to_libseccomp() -> None:
    """A name libseccomp has no number for would be skipped: none of the refused calls may be one here."""
    from tui_agent.core.sandbox import worker_guard

    binding = worker_guard.libseccomp()
    assert binding is not None
    unknown = [name for name in (*worker_guard.ALWAYS_DENIED, "socket", "socketpair", "clone", "clone3", "prctl",
                                 "prlimit64", "kill", "tkill", "tgkill")
               if binding.resolve_syscall(binding.Arch.NATIVE, name)
               == worker_guard.NR_UNKNOWN]
    assert unknown == []
