"""Inside the sandbox (stdlib and libseccomp): what bounds a run's processes: rlimits, dropped capabilities, seccomp
filters, and its children, watched to a deadline (their output kept, head and tail), reaped and killed."""

from __future__ import annotations

import base64
import contextlib
import ctypes
import errno
import functools
import json
import os
import resource
import select
import signal
import struct
import sys
import time
from collections.abc import Callable, Collection, Iterator
from typing import Any

import _socket  # not `socket`: its enum set-up costs a run 10-30 ms on a busy machine

PR_SET_DUMPABLE = 4
PR_CAPBSET_DROP = 24
PR_SET_SECCOMP = 22
PR_SET_CHILD_SUBREAPER = 36
PR_SET_NO_NEW_PRIVS = 38
SECCOMP_MODE_FILTER = 2
BPF_INSTRUCTION_SIZE = 8
"""struct sock_filter: the unit of an exported filter's length."""
WALL = 0x40000000
"""waitpid's __WALL: children whose exit signal is not SIGCHLD (made by a raw clone) count too."""
CLONE_NEWUSER = 0x10000000
LINUX_CAPABILITY_VERSION_3 = 0x20080522
SOCK_TYPE_MASK = 0xF
LOW_WORD = 0xFFFFFFFF
SIGN_BIT = 0x80000000
"""pid_t and int arguments are compared on their low 32 bits, as the kernel reads them (a caller may leave the
upper half of the register zero or sign-extended)."""
DRAIN_AFTER_EXIT_S = 0.5
"""How long a child's pipes are still read after it exited while something it left running holds them open."""
LIVE_CUT_NOTE = b"\n[tuiagent: live output stops here after 1 MB; the rest comes with the result]\n"

ALWAYS_DENIED = (
    "ptrace", "process_vm_readv", "process_vm_writev", "setrlimit", "mount", "umount2", "pivot_root",
    "chroot", "unshare", "setns", "kexec_load", "kexec_file_load", "init_module", "finit_module",
    "delete_module", "bpf", "perf_event_open", "keyctl", "add_key", "request_key", "userfaultfd",
    "io_uring_setup", "open_by_handle_at", "name_to_handle_at", "open_tree", "move_mount", "fsopen",
    "fsconfig", "fsmount", "fspick", "mount_setattr", "reboot", "swapon", "swapoff", "acct",
    "sethostname", "setdomainname", "iopl", "ioperm", "quotactl", "capset", "pidfd_open", "pidfd_send_signal",
    "mq_open", "mq_unlink",  # a POSIX message queue outlives a batch's call (none lists them to remove between calls)
)
BASE_ALLOWED = ("setrlimit", "capset")
"""What the base filter still allows: the worker sets its run's limits and drops capabilities under it."""
NR_UNKNOWN = -1
"""libseccomp's __NR_SCMP_ERROR: a syscall name it has no number for."""


@functools.cache
def libseccomp() -> Any:
    """pyseccomp, imported on first use, or None without it or libseccomp2. Its import runs ldconfig twice (tens of
    milliseconds): a fresh worker never imports it, its run's filter comes built with its request."""
    try:
        import pyseccomp
    except (ImportError, RuntimeError):  # RuntimeError: pyseccomp is there but the libseccomp2 library is not
        return None
    return pyseccomp


_libc = ctypes.CDLL(None, use_errno=True)


def _prctl(option: int, arg2: int = 0, arg3: Any = None) -> int:
    third = ctypes.c_ulong(0) if arg3 is None else arg3
    return int(_libc.prctl(ctypes.c_int(option), ctypes.c_ulong(arg2), third, ctypes.c_ulong(0), ctypes.c_ulong(0)))


def apply_rlimits(policy: dict[str, Any]) -> None:
    """Set soft = hard limits so the code cannot raise them back."""
    mib = 1024 * 1024
    limits = {
        resource.RLIMIT_CPU: int(policy["cpu_s"]),
        resource.RLIMIT_AS: int(policy["memory_mb"]) * mib,
        resource.RLIMIT_FSIZE: int(policy["file_size_mb"]) * mib,
        resource.RLIMIT_NOFILE: int(policy["open_files"]),
        resource.RLIMIT_NPROC: int(policy["processes"]),
        resource.RLIMIT_CORE: 0,
    }
    for kind, value in limits.items():
        _soft, hard = resource.getrlimit(kind)
        if hard != resource.RLIM_INFINITY and value > hard:
            value = hard
        resource.setrlimit(kind, (value, value))


def become_subreaper() -> bool:
    """Orphaned descendants (double-forked daemons) get re-parented to this process, so they can be reaped."""
    return _prctl(PR_SET_CHILD_SUBREAPER, 1) == 0


def drop_capabilities() -> bool:
    """Drop every capability (bounding, effective, permitted, inheritable); root keeps its uid but loses its powers.

    The bounding set (inherited by every process this one starts) is emptied up to the first failure: EINVAL is past
    the last capability, EPERM (no CAP_SETPCAP) refuses every one."""
    for cap in range(64):
        if _prctl(PR_CAPBSET_DROP, cap) != 0:
            break
    header = ctypes.create_string_buffer(struct.pack("Ii", LINUX_CAPABILITY_VERSION_3, 0), 8)
    return int(_libc.capset(header, ctypes.create_string_buffer(24))) == 0  # all three sets empty


def _deny(rules: Any, syscall: str, *args: Any, errno_value: int = errno.EPERM) -> None:
    """Refuse `syscall` (when all of `args` match) with `errno_value`; a name this libseccomp does not know is skipped."""
    lib = libseccomp()
    if lib.resolve_syscall(lib.Arch.NATIVE, syscall) == NR_UNKNOWN:
        return
    rules.add_rule(lib.ERRNO(errno_value), syscall, *args)


def _low_word_is(arg: int, value: int) -> Any:
    lib = libseccomp()
    return lib.Arg(arg, lib.MASKED_EQ, LOW_WORD, value & LOW_WORD)


def _socket_rules(rules: Any, network: bool) -> None:
    """socket(): none without the network, only AF_INET/AF_INET6 with it (never a unix socket: a host's D-Bus,
    Docker, ssh-agent or tmux server, by path or abstract name). socketpair(): stream or seqpacket only (a
    datagram pair could sendto() any unix address)."""
    lib = libseccomp()
    if not network:
        _deny(rules, "socket")
    else:  # one comparison per argument and rule: every domain but the two is refused by a rule of its own
        _deny(rules, "socket", lib.Arg(0, lib.LT, _socket.AF_INET))
        _deny(rules, "socket", lib.Arg(0, lib.GT, _socket.AF_INET6))
        for domain in range(_socket.AF_INET + 1, _socket.AF_INET6):
            _deny(rules, "socket", lib.Arg(0, lib.EQ, domain))
    for sock_type in range(SOCK_TYPE_MASK + 1):
        if sock_type not in (_socket.SOCK_STREAM, _socket.SOCK_SEQPACKET):
            _deny(rules, "socketpair", lib.Arg(1, lib.MASKED_EQ, SOCK_TYPE_MASK, sock_type))


def _signal_rules(rules: Any, protected_pid: int, own_group: int) -> None:
    """kill/tkill/tgkill: never the protected (parent) pid, never -1 or another process group than our own.

    "Negative but not our group" needs two comparisons of one argument, which a libseccomp rule cannot hold: it is
    refused as one rule per bit, "negative and this bit differs from our group's"."""
    lib = libseccomp()
    own_negative = -own_group if own_group > 1 else 0  # group 1 would read as kill(-1)
    for name in ("kill", "tkill", "tgkill"):
        _deny(rules, name, _low_word_is(0, protected_pid))
        if not own_negative:
            _deny(rules, name, lib.Arg(0, lib.MASKED_EQ, SIGN_BIT, SIGN_BIT))
            continue
        for bit in range(31):
            mask = SIGN_BIT | 1 << bit
            _deny(rules, name, lib.Arg(0, lib.MASKED_EQ, mask, SIGN_BIT | (~own_negative & 1 << bit)))


@functools.lru_cache(maxsize=8)
def _bpf(network: bool, run: tuple[int, int] | None = None) -> bytes:
    """Either filter: both kill a call from another architecture (x32 on x86_64 too), refuse unix sockets
    (`_socket_rules`) and new user namespaces (clone3 says ENOSYS: its flags are in memory where the filter cannot see
    them, so libc falls back to clone, whose CLONE_NEWUSER flag is refused).

    The base filter (`run` None) is the one bubblewrap installs before the sandbox's first process exists
    (`--seccomp`), so no process inside is ever unfiltered: every ALWAYS_DENIED call but BASE_ALLOWED, and
    prctl(PR_SET_DUMPABLE, nonzero) (a process that made itself undumpable stays so). A run's own filter, stacked on
    it (`run`: the protected pid and the run's own group, see `_signal_rules`): every ALWAYS_DENIED call, prlimit64
    may read limits (new_limit NULL) but never set them, no signal outside the run, no leaving the subreaper role.
    Under bubblewrap every worker's filter is the same (process 1 of its namespace): built once."""
    lib = libseccomp()
    rules = lib.SyscallFilter(lib.ALLOW)
    rules.set_attr(lib.Attr.ACT_BADARCH, lib.KILL_PROCESS)
    for name in ALWAYS_DENIED:
        if run is not None or name not in BASE_ALLOWED:
            _deny(rules, name)
    _socket_rules(rules, network)
    _deny(rules, "clone3", errno_value=errno.ENOSYS)
    _deny(rules, "clone", lib.Arg(0, lib.MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER))
    if run is None:
        _deny(rules, "prctl", _low_word_is(0, PR_SET_DUMPABLE), lib.Arg(1, lib.NE, 0))
        return _exported(rules)
    _deny(rules, "prlimit64", lib.Arg(2, lib.NE, 0))
    _signal_rules(rules, *run)
    for option in (PR_SET_CHILD_SUBREAPER, PR_SET_DUMPABLE):
        _deny(rules, "prctl", _low_word_is(0, option))
    return _exported(rules)


def seccomp_arch() -> str | None:
    """The machine name when libseccomp (and its Python binding) is there to build filters, else None."""
    return os.uname().machine if libseccomp() is not None else None


def run_filter_message(network: bool, protected_pid: int, own_group: int) -> dict[str, Any] | None:
    """The run filter of a worker the host just started (its parent and group as that worker sees them), built by the
    host ahead of the run and sent with its request; None without libseccomp."""
    if libseccomp() is None:
        return None
    return {"bpf": base64.b64encode(_bpf(network, (protected_pid, own_group))).decode()}


def install_seccomp(sent: Any) -> bool:
    """Load the run filter the host sent with the request (`run_filter_message`), no_new_privs first. Returns False
    without one or when the kernel refuses."""
    if not isinstance(sent, dict) or not isinstance(sent.get("bpf"), str):
        return False
    program = base64.b64decode(sent["bpf"])
    instructions = ctypes.create_string_buffer(program, len(program))
    fprog = struct.pack("HP", len(program) // BPF_INSTRUCTION_SIZE, ctypes.addressof(instructions))  # struct sock_fprog
    if _prctl(PR_SET_NO_NEW_PRIVS, 1) != 0:
        return False
    return _prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.create_string_buffer(fprog, len(fprog))) == 0


def _exported(rules: Any) -> bytes:
    with open(os.memfd_create("tuiagent-seccomp", os.MFD_CLOEXEC), "w+b") as handle:
        rules.export_bpf(handle)  # libseccomp writes to the descriptor itself
        return os.pread(handle.fileno(), os.fstat(handle.fileno()).st_size, 0)


def base_filter_fd(network: bool) -> int | None:
    """A fresh memfd holding the base filter's BPF for bubblewrap's `--seccomp FD` (None without libseccomp)."""
    if libseccomp() is None:
        return None
    fd = os.memfd_create("tuiagent-seccomp", os.MFD_CLOEXEC)
    os.write(fd, _bpf(network))
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def process_info(pid: str) -> tuple[int, int] | None:
    """A live (not zombie) process's parent and session, from /proc; None once it is gone (or dead, not yet reaped)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return None
    state, parent, _group, session = stat[stat.rfind(b")") + 2:].split()[:4]
    return None if state in (b"Z", b"X") else (int(parent), int(session))


def live_processes() -> dict[int, tuple[int, int]]:
    """Every live process this one can see: its parent and its session."""
    return {int(entry): info for entry in os.listdir("/proc") if entry.isdigit() and (info := process_info(entry))}


def descendants(root_pid: int, processes: dict[int, tuple[int, int]] | None = None) -> list[int]:
    """Every live descendant of `root_pid`, from `processes` (`live_processes()` when not given)."""
    children: dict[int, list[int]] = {}
    for pid, (parent, _session) in (live_processes() if processes is None else processes).items():
        children.setdefault(parent, []).append(pid)
    found: list[int] = []
    stack = [root_pid]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found


def stop_then_kill(targets: Callable[[], Collection[int]], rounds: int) -> None:
    """SIGKILL what `targets()` names until it names none (a dying fork bomb may still spawn), every one SIGSTOPped
    first each round: none sees another die before it is stopped (a shell does not run its next command)."""
    for _round in range(rounds):
        pids = targets()
        if not pids:
            return
        for signum in (signal.SIGSTOP, signal.SIGKILL):
            for pid in pids:
                with contextlib.suppress(OSError):  # already gone
                    os.kill(pid, signum)
        time.sleep(0.002)  # a killed process takes a moment to go: the next scan would name it again


def reap_children() -> bool:
    """Reap the children that exited; whether any child is left (without one there is nothing to scan /proc for)."""
    while True:
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG | WALL)
        except ChildProcessError:
            return False
        if pid == 0:
            return True


def kill_descendants() -> None:
    """SIGKILL every descendant of this process (a subreaper: orphans of the run are its children), reaping them."""
    stop_then_kill(lambda: descendants(os.getpid()) if reap_children() else [], rounds=5)
    reap_children()


@contextlib.contextmanager
def _child_exits() -> Iterator[int]:
    """A pipe that becomes readable when a child exits (SIGCHLD through the signal wakeup fd), for `select`; then the
    default signal state again."""
    read_fd, write_fd = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
    signal.signal(signal.SIGCHLD, lambda _signum, _frame: None)
    try:
        yield read_fd
    finally:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        os.close(read_fd)
        os.close(write_fd)


def watch_child(pid: int, sinks: dict[int, Callable[[bytes], None]], deadline: float) -> int | None:
    """Pass what each pipe of `sinks` reads to its sink until all are closed and child `pid` exited, or for
    DRAIN_AFTER_EXIT_S after it exited (something it started may hold them open); its wait status, or None when
    `deadline` (time.monotonic) passed first."""
    open_fds = list(sinks)
    status: int | None = None
    drained_by: float | None = None
    with _child_exits() as wakeup:
        while open_fds or status is None:
            if status is None:  # before each wait: an exit before the wakeup pipe was set up is seen here
                reaped, wait_status = os.waitpid(pid, os.WNOHANG)
                if reaped:
                    status, drained_by = wait_status, time.monotonic() + DRAIN_AFTER_EXIT_S
                    continue
            now = time.monotonic()
            if now >= deadline and status is None:
                return None
            if drained_by is not None and now >= drained_by:
                break
            readable, _, _ = select.select([*open_fds, wakeup], [], [], max(0.0, (drained_by or deadline) - now))
            for fd in readable:
                chunk = os.read(fd, 65536)
                if fd == wakeup:
                    continue  # its bytes only wake the wait
                if chunk:
                    sinks[fd](chunk)
                else:
                    open_fds.remove(fd)
    return status


class Kept:
    """One output stream of a child: every byte counted, the first `head` and the last `tail` bytes kept; the first
    bytes of all streams sharing `live` together (`live[0]`: how many are left) copied to this process' stdout."""

    def __init__(self, head: int, tail: int, live: list[int]) -> None:
        self.head, self.tail, self.live = head, tail, live
        self.kept = bytearray()  # the head, then the newest bytes (at least `tail` of them once it is full)
        self.total = 0

    def add(self, data: bytes) -> None:
        if self.live[0] > 0:
            write_all(1, data[:self.live[0]] + (LIVE_CUT_NOTE if len(data) >= self.live[0] else b""))
            self.live[0] -= len(data)
        self.total += len(data)
        self.kept += data
        if len(self.kept) > 2 * (self.head + self.tail):
            del self.kept[self.head:len(self.kept) - self.tail]

    def text(self, stream: str) -> tuple[str, int]:
        """The kept output as text, with a note of how much was cut from its middle; how many bytes were cut."""
        cut = self.total - self.head - self.tail
        if cut <= 0:
            return self.kept.decode("utf-8", errors="replace"), 0
        head, tail = self.kept[:self.head], self.kept[len(self.kept) - self.tail:]
        note = f"\n[tuiagent: {cut} bytes of {stream} cut here ({self.total} bytes in all): the first {self.head} and last {self.tail} are kept]\n"
        return head.decode("utf-8", errors="replace") + note + tail.decode("utf-8", errors="replace"), cut


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def decoded(line: bytes) -> dict[str, Any] | None:
    """The JSON object `line` holds; None for anything else (nothing, malformed, nested past the recursion limit)."""
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def send(fd: int, message: dict[str, Any]) -> None:
    """`message` (an answer, an MCP request) as a JSON line on `fd`, after what the code printed (flushed first: a line
    without its newline too)."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(BaseException):  # the code may have closed or replaced the stream: the message goes
            stream.flush()                          # on its own pipe
    write_all(fd, (json.dumps(message) + "\n").encode())


def make_undumpable() -> bool:
    """Make this process' /proc/<pid>/environ and memory unreadable to other same-uid processes without CAP_SYS_PTRACE."""
    return _prctl(PR_SET_DUMPABLE, 0) == 0
