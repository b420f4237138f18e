"""Worker-side hardening, stdlib only: rlimits, dropped capabilities, a seccomp filter, and reaping descendants."""

from __future__ import annotations

import ctypes
import os
import platform
import resource
import signal
import struct
from typing import Any

PR_SET_DUMPABLE = 4
PR_CAPBSET_DROP = 24
PR_SET_SECCOMP = 22
PR_SET_CHILD_SUBREAPER = 36
PR_SET_NO_NEW_PRIVS = 38
SECCOMP_MODE_FILTER = 2
SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_RET_ERRNO = 0x00050000
SECCOMP_RET_KILL_PROCESS = 0x80000000
WALL = 0x40000000
"""waitpid's __WALL: children whose exit signal is not SIGCHLD (made by a raw clone) count too."""
EPERM = 1
ENOSYS = 38
CLONE_NEWUSER = 0x10000000
LINUX_CAPABILITY_VERSION_3 = 0x20080522

# BPF opcodes
LD_W_ABS = 0x20
JEQ_K = 0x15
JSET_K = 0x45
RET_K = 0x06
AND_K = 0x54

AF_INET = 2
AF_INET6 = 10
SOCK_STREAM = 1
SOCK_SEQPACKET = 5
SOCK_TYPE_MASK = 0xF

ARCHES: dict[str, tuple[int, dict[str, int]]] = {
    "x86_64": (0xC000003E, {
        "socket": 41, "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311,
        "setrlimit": 160, "prlimit64": 302, "prctl": 157, "clone": 56, "clone3": 435,
        "mount": 165, "umount2": 166, "pivot_root": 155, "chroot": 161, "unshare": 272, "setns": 308,
        "kexec_load": 246, "kexec_file_load": 320, "init_module": 175, "finit_module": 313,
        "delete_module": 176, "bpf": 321, "perf_event_open": 298, "keyctl": 250, "add_key": 248,
        "request_key": 249, "userfaultfd": 323, "io_uring_setup": 425, "open_by_handle_at": 304,
        "name_to_handle_at": 303, "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431,
        "fsmount": 432, "fspick": 433, "mount_setattr": 442, "reboot": 169, "swapon": 167,
        "swapoff": 168, "acct": 163, "sethostname": 170, "setdomainname": 171, "iopl": 172,
        "ioperm": 173, "quotactl": 179, "capset": 126,
        "kill": 62, "tkill": 200, "tgkill": 234, "pidfd_open": 434, "pidfd_send_signal": 424, "socketpair": 53,
    }),
    "aarch64": (0xC00000B7, {
        "socket": 198, "ptrace": 117, "process_vm_readv": 270, "process_vm_writev": 271,
        "setrlimit": 164, "prlimit64": 261, "prctl": 167, "clone": 220, "clone3": 435,
        "mount": 40, "umount2": 39, "pivot_root": 41, "chroot": 51, "unshare": 97, "setns": 268,
        "kexec_load": 104, "kexec_file_load": 294, "init_module": 105, "finit_module": 273,
        "delete_module": 106, "bpf": 280, "perf_event_open": 241, "keyctl": 219, "add_key": 217,
        "request_key": 218, "userfaultfd": 282, "io_uring_setup": 425, "open_by_handle_at": 265,
        "name_to_handle_at": 264, "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431,
        "fsmount": 432, "fspick": 433, "mount_setattr": 442, "reboot": 142, "swapon": 224,
        "swapoff": 225, "acct": 89, "sethostname": 161, "setdomainname": 162, "quotactl": 60,
        "capset": 91, "kill": 129, "tkill": 130, "tgkill": 131, "pidfd_open": 434, "pidfd_send_signal": 424,
        "socketpair": 199,
    }),
}

ALWAYS_DENIED = (
    "ptrace", "process_vm_readv", "process_vm_writev", "setrlimit", "mount", "umount2", "pivot_root",
    "chroot", "unshare", "setns", "kexec_load", "kexec_file_load", "init_module", "finit_module",
    "delete_module", "bpf", "perf_event_open", "keyctl", "add_key", "request_key", "userfaultfd",
    "io_uring_setup", "open_by_handle_at", "name_to_handle_at", "open_tree", "move_mount", "fsopen",
    "fsconfig", "fsmount", "fspick", "mount_setattr", "reboot", "swapon", "swapoff", "acct",
    "sethostname", "setdomainname", "iopl", "ioperm", "quotactl", "capset", "pidfd_open", "pidfd_send_signal",
)

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


def drop_bounding_set() -> None:
    """Empty the bounding set (inherited by every process this one starts).

    The first failure ends it: EINVAL is past the last capability, EPERM (no CAP_SETPCAP) refuses every one."""
    for cap in range(64):
        if _prctl(PR_CAPBSET_DROP, cap) != 0:
            break


def drop_capabilities() -> bool:
    """Drop every capability (bounding, effective, permitted, inheritable); root keeps its uid but loses its powers."""
    drop_bounding_set()
    header = struct.pack("Ii", LINUX_CAPABILITY_VERSION_3, 0)
    data = bytes(24)
    header_buf = ctypes.create_string_buffer(header, len(header))
    data_buf = ctypes.create_string_buffer(data, len(data))
    return int(_libc.capset(header_buf, data_buf)) == 0


def _signal_rules(numbers: dict[str, int], protected_pid: int, own_group: int) -> list[tuple[int, int, int, int]]:
    """kill/tkill/tgkill: never the protected (parent) pid, never -1 or another process group than our own."""
    deny = SECCOMP_RET_ERRNO | EPERM
    own_negative = (-own_group) & 0xFFFFFFFF if own_group > 1 else 0  # group 1 would read as kill(-1)
    rules: list[tuple[int, int, int, int]] = []
    for name in ("kill", "tkill", "tgkill"):
        rules += [
            (JEQ_K, 0, 6, numbers[name]),
            (LD_W_ABS, 0, 0, 16),
            (JEQ_K, 2, 0, protected_pid & 0xFFFFFFFF),
            (JSET_K, 0, 2, 0x80000000),
            (JEQ_K, 1, 0, own_negative),
            (RET_K, 0, 0, deny),
            (LD_W_ABS, 0, 0, 0),
        ]
    return rules


def _socket_rules(numbers: dict[str, int], network: bool) -> list[tuple[int, int, int, int]]:
    """socket(): none without the network, only AF_INET/AF_INET6 with it (never a unix socket: a host's D-Bus,
    Docker, ssh-agent or tmux server, by path or abstract name). socketpair(): stream or seqpacket only (a
    datagram pair could sendto() any unix address)."""
    deny = SECCOMP_RET_ERRNO | EPERM
    if network:
        rules = [
            (JEQ_K, 0, 4, numbers["socket"]),
            (LD_W_ABS, 0, 0, 16),
            (JEQ_K, 2, 0, AF_INET),
            (JEQ_K, 1, 0, AF_INET6),
            (RET_K, 0, 0, deny),
            (LD_W_ABS, 0, 0, 0),
        ]
    else:
        rules = [(JEQ_K, 0, 1, numbers["socket"]), (RET_K, 0, 0, deny)]
    return rules + [
        (JEQ_K, 0, 5, numbers["socketpair"]),
        (LD_W_ABS, 0, 0, 24),
        (AND_K, 0, 0, SOCK_TYPE_MASK),
        (JEQ_K, 2, 0, SOCK_STREAM),
        (JEQ_K, 1, 0, SOCK_SEQPACKET),
        (RET_K, 0, 0, deny),
        (LD_W_ABS, 0, 0, 0),
    ]


def _prologue(arch: str) -> list[tuple[int, int, int, int]]:
    """Kill a call from another architecture; refuse the x32 ABI; load the syscall number."""
    audit_arch, _numbers = ARCHES[arch]
    prog: list[tuple[int, int, int, int]] = [
        (LD_W_ABS, 0, 0, 4),
        (JEQ_K, 1, 0, audit_arch),
        (RET_K, 0, 0, SECCOMP_RET_KILL_PROCESS),
        (LD_W_ABS, 0, 0, 0),
    ]
    if arch == "x86_64":
        prog += [(0x35, 0, 1, 0x40000000), (RET_K, 0, 0, SECCOMP_RET_ERRNO | EPERM)]  # JGE: x32 refused
    return prog


def _namespace_rules(numbers: dict[str, int]) -> list[tuple[int, int, int, int]]:
    deny = SECCOMP_RET_ERRNO | EPERM
    # clone3 passes its flags in memory where BPF cannot see them: ENOSYS makes libc fall back to clone.
    prog = [(JEQ_K, 0, 1, numbers["clone3"]), (RET_K, 0, 0, SECCOMP_RET_ERRNO | ENOSYS)]
    # clone(CLONE_NEWUSER) is refused; plain clone/fork is allowed.
    prog += [
        (JEQ_K, 0, 3, numbers["clone"]),
        (LD_W_ABS, 0, 0, 16),
        (JSET_K, 0, 1, CLONE_NEWUSER),
        (RET_K, 0, 0, deny),
        (LD_W_ABS, 0, 0, 0),
    ]
    return prog


BASE_ALLOWED = ("setrlimit", "capset")
"""What the base filter still allows: the worker sets its run's limits and drops capabilities under it."""


def base_program(arch: str, network: bool) -> list[tuple[int, int, int, int]]:
    """The filter bubblewrap installs before the sandbox's first process exists (`--seccomp`), so no process inside
    is ever unfiltered; each run then adds the stricter `_seccomp_program` on top."""
    _audit_arch, numbers = ARCHES[arch]
    deny = SECCOMP_RET_ERRNO | EPERM
    prog = _prologue(arch)
    for name in ALWAYS_DENIED:
        if name in numbers and name not in BASE_ALLOWED:
            prog += [(JEQ_K, 0, 1, numbers[name]), (RET_K, 0, 0, deny)]
    prog += _socket_rules(numbers, network)
    prog += _namespace_rules(numbers)
    # prctl(PR_SET_DUMPABLE, 1) is refused: a process that made itself undumpable stays so.
    prog += [
        (JEQ_K, 0, 5, numbers["prctl"]),
        (LD_W_ABS, 0, 0, 16),
        (JEQ_K, 0, 3, PR_SET_DUMPABLE),
        (LD_W_ABS, 0, 0, 24),
        (JEQ_K, 1, 0, 0),
        (RET_K, 0, 0, deny),
        (RET_K, 0, 0, SECCOMP_RET_ALLOW),
    ]
    return prog


def base_filter_bytes(network: bool) -> bytes | None:
    """The base filter as bubblewrap's `--seccomp FD` reads it (struct sock_filter[]), or None on an unknown arch."""
    arch = seccomp_arch()
    if arch is None:
        return None
    return b"".join(struct.pack("HBBI", code, jt, jf, k) for code, jt, jf, k in base_program(arch, network))


def _seccomp_program(arch: str, network: bool, protected_pid: int, own_group: int) -> list[tuple[int, int, int, int]]:
    _audit_arch, numbers = ARCHES[arch]
    deny = SECCOMP_RET_ERRNO | EPERM
    prog = _prologue(arch)
    for name in ALWAYS_DENIED:
        if name in numbers:
            prog += [(JEQ_K, 0, 1, numbers[name]), (RET_K, 0, 0, deny)]
    prog += _socket_rules(numbers, network)
    prog += _namespace_rules(numbers)
    # prlimit64 may read limits (new_limit == NULL) but never set them.
    prog += [
        (JEQ_K, 0, 5, numbers["prlimit64"]),
        (LD_W_ABS, 0, 0, 16 + 8 * 2),
        (JEQ_K, 0, 2, 0),
        (LD_W_ABS, 0, 0, 16 + 8 * 2 + 4),
        (JEQ_K, 1, 0, 0),
        (RET_K, 0, 0, deny),
        (LD_W_ABS, 0, 0, 0),
    ]
    prog += _signal_rules(numbers, protected_pid, own_group)
    # prctl: no leaving the subreaper role, no re-enabling dumpable.
    prog += [
        (JEQ_K, 0, 4, numbers["prctl"]),
        (LD_W_ABS, 0, 0, 16),
        (JEQ_K, 1, 0, PR_SET_CHILD_SUBREAPER),
        (JEQ_K, 0, 1, PR_SET_DUMPABLE),
        (RET_K, 0, 0, deny),
    ]
    prog.append((RET_K, 0, 0, SECCOMP_RET_ALLOW))
    return prog


def seccomp_arch() -> str | None:
    """The machine name when a seccomp syscall table exists for it, else None."""
    machine = platform.machine()
    return machine if machine in ARCHES else None


def install_seccomp(network: bool, protected_pid: int, own_group: int) -> bool:
    """Install the filter (no_new_privs first). Returns False when the arch is unsupported or the kernel refuses."""
    arch = seccomp_arch()
    if arch is None:
        return False
    program = _seccomp_program(arch, network, protected_pid, own_group)
    raw = b"".join(struct.pack("HBBI", code, jt, jf, k) for code, jt, jf, k in program)
    filters = ctypes.create_string_buffer(raw, len(raw))
    fprog = struct.pack("HxxxxxxP", len(program), ctypes.addressof(filters))
    fprog_buf = ctypes.create_string_buffer(fprog, len(fprog))
    if _prctl(PR_SET_NO_NEW_PRIVS, 1) != 0:
        return False
    return _prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, fprog_buf) == 0


def descendants(root_pid: int) -> list[int]:
    """Every live descendant of `root_pid`, from /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2:].split()
        children.setdefault(int(fields[1]), []).append(int(entry))
    found: list[int] = []
    stack = [root_pid]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found


def reap_children() -> bool:
    """Reap the children that exited; whether any child is left (without one there is nothing to scan /proc for)."""
    while True:
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG | WALL)
        except ChildProcessError:
            return False
        if pid == 0:
            return True


def kill_descendants() -> int:
    """SIGKILL every descendant of this process (repeat: a dying fork bomb may still be spawning)."""
    killed = 0
    for _round in range(5):
        if not reap_children():
            break  # no child at all, so no descendant: every one has an ancestor that is our child
        pids = descendants(os.getpid())
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except OSError:  # already gone
                pass
        while True:
            try:
                pid, _status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
    return killed


def make_undumpable() -> bool:
    """Make this process' /proc/<pid>/environ and memory unreadable to other same-uid processes without CAP_SYS_PTRACE."""
    return _prctl(PR_SET_DUMPABLE, 0) == 0
