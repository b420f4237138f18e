"""Isolation tiers: probing bubblewrap, the scrubbed environment, and the command line that starts a worker."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

from tui_agent.core.sandbox import protected
from tui_agent.core.sandbox.hostpaths import socket_folders
from tui_agent.core.sandbox.netproxy import PROXY_PORT
from tui_agent.core.sandbox.venvs import project_venvs
from tui_agent.core.sandbox.toolchain import Toolchain, bwrap_arguments

WORKER_SCRIPT = Path(__file__).with_name("worker.py")
PACKAGE_PARENT = Path(__file__).resolve().parents[3]
"""The folder holding the `tui_agent` package, put on the worker's path."""

SANDBOX_HOME = "/tmp/home"
ALLOWED_ENV = ("LANG", "LC_ALL", "LC_CTYPE", "TZ")
"""The only variables copied from the parent's environment; everything else (API keys, tokens) is dropped."""

NAMESPACES = ("--unshare-pid", "--unshare-ipc", "--unshare-uts")

_probe_lock = threading.Lock()
_probe_cache: dict[str, str | None] = {}


def bwrap_path() -> str | None:
    return shutil.which("bwrap")


def probe_bubblewrap() -> str | None:
    """None when bubblewrap really works here (tried once per process), else the reason it does not."""
    with _probe_lock:
        if "result" in _probe_cache:
            return _probe_cache["result"]
        binary = bwrap_path()
        if binary is None:
            reason: str | None = "bwrap is not installed (Debian/Ubuntu: apt-get install bubblewrap)"
        else:
            command = [binary, *NAMESPACES, "--as-pid-1", "--unshare-net", "--die-with-parent", "--new-session",
                       "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "true"]
            try:
                done = subprocess.run(command, capture_output=True, timeout=10, env={"PATH": "/usr/bin:/bin"})
                reason = None if done.returncode == 0 else (
                    f"bwrap fails here: {done.stderr.decode(errors='replace').strip() or done.returncode}"
                )
            except (OSError, subprocess.TimeoutExpired) as exc:
                reason = f"bwrap fails here: {exc}"
        _probe_cache["result"] = reason
        return reason


def sandbox_env(*, home: str, tmpdir: str, tier: str, token: str, toolchain: Toolchain | None = None) -> dict[str, str]:
    """The allow-listed environment agent code sees: no secret can be in it; `toolchain` adds PATH and build variables."""
    env = {key: os.environ[key] for key in ALLOWED_ENV if key in os.environ}
    interpreter_bin = str(Path(sys.executable).parent)
    if toolchain is not None:
        env.update(toolchain.environment())
    env.update(
        PATH=env.get("PATH") or f"{interpreter_bin}:/usr/local/bin:/usr/bin:/bin",
        HOME=home,
        TMPDIR=tmpdir,
        PYTHONDONTWRITEBYTECODE="1",
        PYTHONIOENCODING="utf-8",
        TUIAGENT_SANDBOX=tier,
        TUIAGENT_SANDBOX_RUN=token,
    )
    env.setdefault("LANG", "C.UTF-8")
    return env


def _is_under(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def hidden_paths() -> list[Path]:
    """Folders replaced by empty tmpfs inside bubblewrap: homes, /tmp and the folders holding host sockets."""
    candidates = [Path("/root"), Path("/home"), Path(os.path.expanduser("~")), *socket_folders()]
    unique: list[Path] = []
    for path in candidates:
        resolved = path.resolve() if path.exists() else None
        if resolved is None or resolved == Path("/") or any(_is_under(resolved, folder) for folder in unique):
            continue
        unique = [folder for folder in unique if not _is_under(folder, resolved)] + [resolved]
    return unique


def revealed_files(hidden: list[Path]) -> list[Path]:
    """Plain files the sandbox needs from a hidden folder: /etc/resolv.conf often links into /run (systemd-resolved)."""
    found: list[Path] = []
    for name in ("/etc/resolv.conf",):
        target = Path(name).resolve()
        if target.is_file() and any(_is_under(target, folder) for folder in hidden):
            found.append(target)
    return found


def interpreter_paths() -> list[Path]:
    """What the worker interpreter needs to be visible: prefixes, the executable's folder, the tui_agent package."""
    paths = {Path(sys.prefix), Path(sys.base_prefix), Path(sys.exec_prefix), Path(sys.base_exec_prefix),
             Path(os.path.realpath(sys.executable)).parent, Path(sys.executable).parent, PACKAGE_PARENT}
    return sorted({p.resolve() for p in paths if p.exists()})


def worker_argv(channel_fd: int, project: Path, serve_scratch: list[Path] | None = None,
                net_fd: int | None = None) -> list[str]:
    """The worker's command line; `serve_scratch` makes it a fork server that wipes those private folders per run;
    `net_fd` is where it hands over its network proxy listener (netrelay.py)."""
    serve = ["serve", *(str(folder) for folder in serve_scratch)] if serve_scratch is not None else []
    net = [f"net={net_fd}:{PROXY_PORT}"] if net_fd is not None else []
    return [sys.executable, "-I", "-B", str(WORKER_SCRIPT), str(channel_fd), str(project), str(PACKAGE_PARENT), *serve,
            *net]


def bubblewrap_command(project: Path, *, network: bool, channel_fd: int, project_writable: bool = True,
                       serve: bool = False, toolchain: Toolchain | None = None,
                       seccomp_fd: int | None = None, venv_writable: bool = False,
                       drop_caps: bool = False, git_commits: bool = False,
                       net_fd: int | None = None) -> list[str]:
    """The bwrap command line: / read-only, homes, /tmp and host socket folders hidden, the project the only
    writable place; the worker is process 1 (no unfiltered bubblewrap init), under the base filter read from
    `seccomp_fd` before it starts.

    With `project_writable` False the whole project is read-only too; only the private /tmp can be written.
    `drop_caps`: bubblewrap runs as root of a user namespace (an overlay launcher's) even for a user without privileges.
    `git_commits`: what a commit writes in the project's `.git` is writable (an overlay run: the harvest filters it).
    The network namespace is always the sandbox's own (only `lo`): a `network` grant is served by the host's proxy
    through the listener the worker hands over on `net_fd` (netproxy.py), never by the host's interfaces.
    """
    binary = bwrap_path()
    assert binary is not None
    command = [binary, *NAMESPACES, "--as-pid-1", "--die-with-parent", "--new-session", "--hostname", "sandbox",
               "--unshare-net"]
    if os.geteuid() == 0 or drop_caps:
        command += ["--cap-drop", "ALL"]
    if seccomp_fd is not None:
        command += ["--seccomp", str(seccomp_fd)]
    command += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    hidden = hidden_paths()
    for folder in hidden:
        command += ["--tmpfs", str(folder)]
    for file in revealed_files(hidden):
        command += ["--ro-bind", str(file), str(file)]
    command += ["--dir", SANDBOX_HOME]
    interpreter = interpreter_paths()
    for path in interpreter:
        if any(_is_under(path, folder) for folder in hidden) and not _is_under(path, project):
            command += ["--ro-bind", str(path), str(path)]
    if toolchain is not None:
        command += bwrap_arguments(toolchain, hidden)
    if project_writable:
        command += ["--bind", str(project), str(project)]
        command += protected.read_only_binds(project, git_commits=git_commits)
        if not venv_writable:  # a test run must not plant a .pth in a virtualenv (used or not) the person runs later
            for venv in project_venvs(project, toolchain.venv if toolchain is not None else None):
                command += ["--ro-bind", str(venv), str(venv)]
    else:
        command += ["--ro-bind", str(project), str(project)]
    for path in interpreter:
        if _is_under(path, project):
            command += ["--ro-bind", str(path), str(path)]
    command += ["--chdir", str(project), "--",
                *worker_argv(channel_fd, project, hidden if serve else None, net_fd if network else None)]
    return command


def project_layout(project: Path) -> tuple[tuple[str, bool], ...]:
    """Which read-only paths exist (the project's virtualenvs too); a warm worker started under another layout
    must not be used."""
    return (*protected.layout(project), *((f"virtualenv {venv}", True) for venv in project_venvs(project, None)))
