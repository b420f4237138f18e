"""The sandbox security suite: hostile snippets under both tiers, each side effect measured directly outside the sandbox."""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.gitrepo import git
from tui_agent.commands.sandbox_status import describe, process_cap_enforced
from tests.hostile.cases import (
    CANARY, CASES, CATALOG, CONNECT_TCP, GIT, HOME, LEFTOVERS, NETWORK, OUTSIDE, POSITIVE_CONTROL, Case,
)
from tui_agent.core.project import Project
from tui_agent.core.sandbox import Sandbox, SandboxPolicy
from tui_agent.core.sandbox.launch import interpreter_paths
from tui_agent.core.sandbox.toolchain import discover
from tui_agent.core.sandbox import Snippet

TIERS = ["bubblewrap", "rlimits"]
HOME_CASES = ("read_home", "read_ssh_keys")
TOOL = 'def count_lines(path: str) -> int:\n    """Count lines."""\n    return len(open(path).readlines())\n'


class Listener:
    """A TCP, UDP or unix-socket server on this machine that records anything it receives."""

    def __init__(self, kind: str, address: str | None = None) -> None:
        self.received: list[bytes] = []
        family = socket.AF_UNIX if kind == "unix" else socket.AF_INET
        sock_type = socket.SOCK_DGRAM if kind == "udp" else socket.SOCK_STREAM
        self.sock = socket.socket(family, sock_type)
        self.sock.bind(address if kind == "unix" else ("127.0.0.1", 0))
        if kind != "udp":
            self.sock.listen(8)
        self.sock.settimeout(0.1)
        self.kind = kind
        self.port = self.sock.getsockname()[1] if kind != "unix" else 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                if self.kind == "udp":
                    data, _peer = self.sock.recvfrom(4096)
                    self.received.append(data)
                else:
                    conn, _peer = self.sock.accept()
                    conn.settimeout(0.5)
                    try:
                        self.received.append(b"<connected>" + conn.recv(4096))
                    except OSError:
                        self.received.append(b"<connected>")
                    conn.close()
            except OSError:
                continue

    def stop(self) -> None:
        """Ask the thread to stop (it sees it within its 0.1 s timeout); `close` waits for it."""
        self._stop.set()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2)
        self.sock.close()


def tree_hash(*paths: Path) -> str:
    digest = hashlib.sha256()
    for root in paths:
        files = sorted(root.rglob("*")) if root.is_dir() else [root]
        for file in files:
            digest.update(str(file).encode())
            if file.is_symlink():
                digest.update(b"link:" + os.readlink(file).encode())
            elif file.is_file():
                digest.update(file.read_bytes())
        digest.update(b"exists" if root.exists() else b"missing")
    return digest.hexdigest()


def snapshot(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): (hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else p.stat().st_mode.__str__())
        for p in sorted(folder.rglob("*"))
    }


def processes_with(tag: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            try:
                if tag.encode() in Path(f"/proc/{entry}/cmdline").read_bytes():
                    found.append(int(entry))
            except OSError:
                pass
    return found


@dataclass
class World:
    project: Project
    outside: Path
    tcp: Listener
    udp: Listener
    unix_in_project: Listener
    unix_outside: Listener
    canary: subprocess.Popen
    tag: str
    before: dict[str, object] = field(default_factory=dict)

    def catalog_paths(self) -> list[Path]:
        p = self.project
        return [p.tools_dir, p.recipes_dir, p.config_path]

    def fill(self, code: str) -> str:
        values = dict(
            outside=self.outside, tcp_port=self.tcp.port, udp_port=self.udp.port,
            unix_in_project=self.unix_in_project.sock.getsockname(), unix_outside=self.unix_outside.sock.getsockname(),
            canary_pid=self.canary.pid, parent_pid=os.getpid(), parent_pgid=os.getpgrp(), tag=self.tag,
            real_home=Path.home(),
        )
        values["connect_tcp"] = CONNECT_TCP.format(**values)
        return code.format(**values)

    def take_before(self) -> None:
        self.before = {
            OUTSIDE: snapshot(self.outside),
            GIT: tree_hash(self.project.root / ".git"),
            CATALOG: tree_hash(*self.catalog_paths()),
        }


@pytest.fixture
def world(repo: Path, tmp_path: Path) -> Iterator[World]:
    project = Project.at(repo)
    project.ensure_layout()
    project.tool_path("count_lines").write_text(TOOL)
    project.config_path.write_text('model = "test"\n')
    git(repo, "add", ".agent/tools/count_lines.py", ".agent/config.toml")
    git(repo, "commit", "-q", "-m", "catalog")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim.txt").write_text("original")
    tag = f"hostile-{secrets.token_hex(6)}"
    canary = subprocess.Popen(["/bin/sh", "-c", "sleep 600; : canary"])
    unix_short = Path(f"/tmp/sbx-{secrets.token_hex(4)}.sock")  # unix paths must stay short
    w = World(project, outside, Listener("tcp"), Listener("udp"), Listener("unix", str(repo / "l.sock")),
              Listener("unix", str(unix_short)), canary, tag)
    w.take_before()
    yield w
    listeners = (w.tcp, w.udp, w.unix_in_project, w.unix_outside)
    for listener in listeners:
        listener.stop()  # all at once: each thread takes up to its timeout to notice
    for listener in listeners:
        listener.close()
    unix_short.unlink(missing_ok=True)
    canary.kill()
    canary.wait()


def allowed_home_entries(project: Path) -> set[str]:
    """Names the strong tier may show in the home folder: the paths down to the bind-mounted interpreter and to the
    toolchain folders (read-only, secrets masked; tests/test_sandbox_toolchain.py checks what they show)."""
    home = Path.home().resolve()
    visible = [*interpreter_paths(), *discover(project).read_only]
    resolved = [path.resolve() for path in visible]
    return {path.relative_to(home).parts[0] for path in resolved if home in path.parents}


def check_effects(world: World, result, case_: Case, tier: str) -> None:
    misses = case_.rlimits_misses if tier == "rlimits" else frozenset()
    failures: list[str] = []
    if OUTSIDE not in misses and snapshot(world.outside) != world.before[OUTSIDE]:
        failures.append(f"outside folder changed: {snapshot(world.outside)}")
    if GIT not in misses and tree_hash(world.project.root / ".git") != world.before[GIT]:
        failures.append(".git changed")
    if CATALOG not in misses and tree_hash(*world.catalog_paths()) != world.before[CATALOG]:
        failures.append("catalog changed")
    heard = world.tcp.received + world.udp.received + world.unix_in_project.received + world.unix_outside.received
    if NETWORK not in misses and heard:
        failures.append(f"a listener received {heard}")
    if CANARY not in misses and world.canary.poll() is not None:
        failures.append("the canary process died")
    deadline = time.monotonic() + 1.0
    while processes_with(world.tag) and time.monotonic() < deadline:
        time.sleep(0.05)
    if LEFTOVERS not in misses and processes_with(world.tag):
        failures.append(f"processes left running: {processes_with(world.tag)}")
    if case_.name in HOME_CASES and HOME not in misses and result.ok and result.value:
        extra = set(result.value) - allowed_home_entries(world.project.root) if isinstance(result.value, list) else result.value
        if extra:
            failures.append(f"home readable: {extra}")
    if case_.expect_failure and not misses and result.ok:
        failures.append(f"the attack ran without error: {result}")
    assert not failures, f"{case_.name} under {tier}: " + "; ".join(failures)


@pytest.mark.parametrize("tier", TIERS)
@pytest.mark.parametrize("case_", CASES, ids=[c.name for c in CASES])
async def test_hostile_snippet(case_: Case, tier: str, world: World) -> None:
    box = await Sandbox.start(world.project, tier=tier, warm_workers=0)
    try:
        if case_.name == "fork_bomb" and not process_cap_enforced():
            # Never fork-bomb a machine where nothing caps processes: the miss must be stated instead.
            assert any("fork bomb" in miss for miss in describe(box)["expected_misses"])
            return
        policy = SandboxPolicy(timeout_s=5, cpu_s=5, memory_mb=512, processes=32).with_(**case_.policy)
        code = world.fill(case_.code)
        result = await box.run(Snippet(code), policy)
    finally:
        await box.aclose()
    assert os.getpid() and os.getpgrp()  # the parent (this process) is alive
    check_effects(world, result, case_, tier)
    if case_.name == "output_bomb":
        assert result.output_truncated and "stdout cut" in result.stdout
    if case_.name in ("memory_bomb", "disk_bomb"):
        assert result.error_kind == "limit", result
    if case_.name == "disk_bomb":
        assert (world.project.root / "bomb.bin").stat().st_size <= 2 * 1024 * 1024
    if case_.name in ("infinite_loop", "daemon_then_hang"):
        assert result.error_kind == "timeout"


@pytest.mark.parametrize("tier", TIERS)
async def test_positive_control_succeeds(tier: str, world: World) -> None:
    box = await Sandbox.start(world.project, tier=tier, warm_workers=0)
    try:
        result = await box.run(Snippet(POSITIVE_CONTROL))
    finally:
        await box.aclose()
    assert result.ok, result.error
    assert result.value == {"head": "ref: refs/heads/main", "echo": "child ok", "lines": 1}
    assert (world.project.root / "result.txt").read_text() == "written by the sandbox"
    assert set(result.files_read) >= {".git/HEAD", "README.md"}


EXECUTED_DESCRIPTORS = """\
import os, subprocess
listing = subprocess.run(["/bin/sh", "-c", "for fd in /proc/self/fd/*; do readlink $fd; done"], close_fds=False,
                         capture_output=True, text=True).stdout
[line for line in listing.splitlines() if line.startswith("socket:")]
"""


@pytest.mark.parametrize("tier", TIERS)
async def test_a_program_a_run_executes_never_holds_the_channel_to_the_host(tier: str, world: World) -> None:
    """The run's channel is close-on-exec: a program the code executes, even asking for every inherited descriptor,
    cannot write the run's answer (nor ask the host anything) on it."""
    box = await Sandbox.start(world.project, tier=tier, warm_workers=0)
    try:
        result = await box.run(Snippet(EXECUTED_DESCRIPTORS))
    finally:
        await box.aclose()
    assert result.ok, result.error
    assert result.value == []


SECRET_HUNT = """\
import os
secret_names = [k for k in os.environ if 'KEY' in k or 'TOKEN' in k or 'SECRET' in k]
print('env names:', secret_names)
readable = 0
for entry in os.listdir('/proc'):
    if not entry.isdigit():
        continue
    try:
        with open(f'/proc/{entry}/environ', 'rb') as handle:
            data = handle.read()
    except OSError:
        continue
    readable += 1
    print(entry, data.decode(errors='replace'))
pid = os.getpid()
while pid > 1:
    try:
        stat = open(f'/proc/{pid}/stat').read()
    except OSError:
        break
    pid = int(stat[stat.rfind(')') + 2:].split()[1])
    try:
        print('ancestor', pid, open(f'/proc/{pid}/environ', 'rb').read())
    except OSError as exc:
        print('ancestor', pid, 'unreadable', exc.errno)
print('readable environs:', readable)
"""


@pytest.mark.parametrize("tier", TIERS)
def test_secrets_never_reach_agent_code(tier: str, repo: Path, tmp_path: Path) -> None:
    """The host process holds ANTHROPIC_API_KEY from its start; agent code finds it nowhere (env or /proc)."""
    secret = f"sk-ant-{secrets.token_hex(16)}"
    script = tmp_path / "hunt.py"
    script.write_text(SECRET_HUNT)
    env = {**os.environ, "ANTHROPIC_API_KEY": secret, "GITHUB_TOKEN": secret + "gh"}
    host = subprocess.Popen(
        [sys.executable, "-m", "tui_agent.cli", "--project", str(repo), "sandbox", "run", str(script), "--tier", tier],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    # Control: the secret really is in the host's initial environment, ready to be stolen.
    time.sleep(0.2)
    if host.poll() is None:
        assert secret.encode() in Path(f"/proc/{host.pid}/environ").read_bytes()
    out, err = host.communicate(timeout=60)
    text = out.decode(errors="replace") + err.decode(errors="replace")
    assert host.returncode == 0, text
    assert "readable environs:" in text and "readable environs: 0" not in text  # the hunt did read environs
    assert "env names: []" in text
    assert secret not in text


def test_status_cli_reports_tier(repo: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "tui_agent.cli", "--project", str(repo), "sandbox", "status", "--json"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    info = json.loads(done.stdout)
    assert info["tier"] == "bubblewrap" and info["strong"] is True
    fallback = subprocess.run([sys.executable, "-m", "tui_agent.cli", "--project", str(repo), "sandbox", "status",
                               "--tier", "rlimits"], capture_output=True, text=True, timeout=60)
    assert "WARNING" in fallback.stdout and "expected misses" in fallback.stdout


def test_min_level_refuses_in_cli(repo: Path, tmp_path: Path) -> None:
    project = Project.at(repo)
    project.ensure_layout()
    project.config_path.write_text('[sandbox]\nmin_level = "bubblewrap"\n')
    script = tmp_path / "hello.py"
    script.write_text("print('hello')\n")
    refused = subprocess.run([sys.executable, "-m", "tui_agent.cli", "--project", str(repo), "sandbox", "run",
                              str(script), "--tier", "rlimits"], capture_output=True, text=True, timeout=60)
    assert refused.returncode == 3 and "below sandbox.min_level" in refused.stderr and "hello" not in refused.stdout
    ran = subprocess.run([sys.executable, "-m", "tui_agent.cli", "--project", str(repo), "sandbox", "run", str(script)],
                         capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0 and ran.stdout == "hello\n"


def test_run_cli_timeout_and_exit_status(repo: Path, tmp_path: Path) -> None:
    script = tmp_path / "slow.py"
    script.write_text("import os, sys\nprint(os.getcwd())\nsys.stdout.flush()\nif len(sys.argv) > 5: pass\nimport time\ntime.sleep(30)\n")
    done = subprocess.run([sys.executable, "-m", "tui_agent.cli", "--project", str(repo), "sandbox", "run", str(script),
                           "--timeout", "1"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 124 and done.stdout.strip() == str(repo) and "timed out" in done.stderr
    failing = tmp_path / "fail.py"
    failing.write_text("import sys\nprint('bye', file=sys.stderr)\nsys.exit(7)\n")
    done = subprocess.run([sys.executable, "-m", "tui_agent.cli", "--project", str(repo), "sandbox", "run",
                           str(failing)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 7 and "bye" in done.stderr
