"""The one launch path: what a worker is started as (`Launch`) becomes its command line and environment, for the fresh
worker and the overlay worker alike (the overlay's folders too); the bubblewrap and overlay probes try the same pieces.

Under bubblewrap the command line is, outermost first: the shell that joins the run's cgroup (`JOIN_THEN_EXEC`), the
overlay mount in a new mount namespace (a writable run through an overlay, `OVERLAY_MOUNT`), bubblewrap (`_bwrap`),
the worker. What bubblewrap shows of the host the same way at every launch (`HostMounts`: hidden folders, revealed
files, the interpreter's and the toolchain's folders, masked secrets) is computed once, when the toolchain is
discovered; a launch adds the project's binds, which it looks at anew. The host folders bubblewrap hides behind an
empty tmpfs (homes, and the folders where the host keeps its sockets) are named here too. The weak (rlimits) tier's path is small on
purpose: the cgroup join (where there is one), then the worker itself with a private home and /tmp under the
sandbox's scratch folder: no filesystem or namespace isolation.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tui_agent.core.network.proxy import PROXY_PORT, proxy_env
from tui_agent.core.sandbox import protected
from tui_agent.core.sandbox.policy import TIER_BUBBLEWRAP, SandboxPolicy
from tui_agent.core.sandbox.fanout import SANDBOX_HOME

if TYPE_CHECKING:
    from tui_agent.core.sandbox.toolchain import Toolchain

WORKER_SCRIPT = Path(__file__).with_name("worker.py")
PACKAGE_PARENT = Path(__file__).resolve().parents[3]
"""The folder holding the `tui_agent` package, put on the worker's path."""

ALLOWED_ENV = ("LANG", "LC_ALL", "LC_CTYPE", "TZ")
"""The only variables copied from the parent's environment; everything else (API keys, tokens) is dropped."""
SYSTEM_PATH = ("/usr/local/bin", "/usr/bin", "/bin")
"""The system's program folders, last on agent code's PATH (after tuiagent's interpreter's folder)."""

ISOLATED = ("--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-net", "--as-pid-1", "--die-with-parent",
            "--new-session")
"""Every bubblewrap the sandbox starts (the probe too): its own namespaces (network: only `lo`), the worker as
process 1 (no unfiltered bubblewrap init), gone with its parent, in a new session (no terminal to inject into)."""
JOIN_THEN_EXEC = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 123; shift; done; shift; exec "$@"'
"""The shell joins each of the run's cgroup folders, then becomes the sandbox: every descendant is born inside it (exit
status 123 when it cannot: not the overlay's MOUNT_FAILED, which turns overlays off for the session)."""
OVERLAY_MOUNT = '(cd "$1" && exec mount -t overlay overlay -o "$2" "$3" 3<"$3") || exit 125; shift 3; exec "$@"'
"""Mounts the overlay (exit status `writable_runs.MOUNT_FAILED` when it cannot), then becomes bubblewrap. No path is in
the mount options (`OVERLAY_OPTIONS`), where a ',', ':' or '\\' in a path would need escaping that not every mount
honours (util-linux's new mount API splits options at every ','): the lower layer is the project opened as fd 3 of
`mount` alone, the upper and work folders are named relative to their folder, `mount`'s working folder."""
OVERLAY_OPTIONS = "lowerdir=/proc/self/fd/3,upperdir=upper,workdir=work,volatile"
DEV_SHM = "/dev/shm"
"""A private tmpfs of each run (POSIX shared memory): a batch empties it between calls like /tmp."""
SHM_SHARE = 8
"""/dev/shm may hold this fraction of the run's memory limit, /tmp (HOME included) the rest: files there are memory
that no rlimit counts, so together they hold no more than the limit; every other hidden folder is read-only."""
HIDING_ENVIRON = ("HOME", "XDG_RUNTIME_DIR")
"""The variables that say which host folders are hidden (`host_mounts`)."""
HOST_SOCKET_FOLDERS = ("/run", "/var/run", "/var/tmp", "/tmp")
"""Where a host keeps its sockets (D-Bus, Docker, ssh-agent, gpg-agent, tmux, systemd): hidden by bubblewrap, with
$XDG_RUNTIME_DIR, whether or not the run has the network."""

PROBE_MOUNTS = (*ISOLATED, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc")
_probe_lock = threading.Lock()
_overlay_probed: list[str | None] = []


@dataclass(frozen=True)
class Launch:
    """What a worker is started as; two workers of one Launch are interchangeable (the warm pool's key).

    `project_writable` False (bubblewrap only) mounts the whole project read-only; `venv_writable` leaves the project's
    virtualenvs writable; `overlay` (bubblewrap, writable) mounts the project as an overlay, the run's writes landing in
    its upper folder. `memory_mb` (bubblewrap) bounds what the private folders may hold (SHM_SHARE).
    """

    tier: str
    network: bool = False
    project_writable: bool = True
    venv_writable: bool = False
    overlay: bool = False
    memory_mb: int = SandboxPolicy.memory_mb


@dataclass(frozen=True)
class HostMounts:
    """What bubblewrap shows of the host the same way at every launch: the `hidden` folders behind an empty tmpfs,
    then `binds`, its arguments for the files revealed in them, the interpreter's and the toolchain's folders
    (read-only) and the secrets masked inside those. Made under `environ` (HIDING_ENVIRON's values) while the
    `unseen` folders to hide did not exist: once either changes they are made anew."""

    hidden: tuple[Path, ...]
    binds: tuple[str, ...]
    environ: tuple[str | None, ...]
    unseen: tuple[Path, ...]

    def current(self) -> bool:
        return self.environ == tuple(map(os.environ.get, HIDING_ENVIRON)) and not any(map(os.path.exists, self.unseen))


@dataclass(frozen=True)
class Command:
    """A worker's command line, its environment, and the weak tier's private folder (None under bubblewrap)."""

    argv: list[str]
    env: dict[str, str]
    private_dir: str | None


def command(project: Path, launch: Launch, *, token: str, scratch: Path, channel_fd: int,
            toolchain: Toolchain | None = None, seccomp_fd: int | None = None, net_fd: int | None = None,
            overlay: OverlayDirs | None = None, cgroup_procs: tuple[Path, ...] = (),
            layout: tuple[str, ...] | None = None) -> Command:
    """The command that starts a worker as `launch` says: `seccomp_fd` is the base filter bubblewrap installs, `net_fd`
    where the worker hands over its proxy listener (a network grant), `overlay` the folders of its overlay mount,
    `cgroup_procs` the run cgroup's `cgroup.procs` files the first process joins, `layout` what `project_layout` gave
    for this launch (looked at here when None)."""
    join = ["/bin/sh", "-c", JOIN_THEN_EXEC, "sh", *map(str, cgroup_procs), "--"] if cgroup_procs else []
    if launch.tier != TIER_BUBBLEWRAP:
        private_dir = scratch / f"run-{token}"
        (private_dir / "home").mkdir(parents=True)
        (private_dir / "tmp").mkdir()
        env = sandbox_env(home=str(private_dir / "home"), tmpdir=str(private_dir / "tmp"), tier=launch.tier,
                          token=token, toolchain=toolchain)
        return Command([*join, *worker_argv(channel_fd, project)], env, str(private_dir))
    mounts = toolchain.mounts if toolchain is not None else None
    if mounts is None or not mounts.current():
        mounts = host_mounts(project, *((toolchain.read_only, toolchain.masked) if toolchain is not None else ()))
    mount = overlay_prefix(overlay, project) if overlay is not None else []
    argv = _bwrap(project, launch, mounts, venv=toolchain.venv if toolchain is not None else None, seccomp_fd=seccomp_fd,
                  layout=project_layout(project, launch) if layout is None else layout)
    argv += worker_argv(channel_fd, project, [*mounts.hidden, Path(DEV_SHM)], net_fd if launch.network else None)
    env = sandbox_env(home=SANDBOX_HOME, tmpdir="/tmp", tier=launch.tier, token=token, toolchain=toolchain)
    if net_fd is not None and launch.network:
        env.update(proxy_env())
    return Command([*join, *mount, *argv], env, None)


def _bwrap(project: Path, launch: Launch, mounts: HostMounts, *, venv: Path | None, seccomp_fd: int | None,
           layout: tuple[str, ...]) -> list[str]:
    """bubblewrap up to the worker: / read-only, `mounts` (homes, /tmp and host socket folders hidden), the project
    the only writable place but for its `layout` and the toolchain's `venv` (read-only too unless
    `launch.project_writable`), under the base filter read from `seccomp_fd`.

    Capabilities are dropped where bubblewrap runs as root of a user namespace (an overlay launcher's) even for a user
    without privileges; an overlay run's `.git` is writable where a commit writes (the harvest filters it). A `network`
    grant is served by the host's proxy through the listener the worker hands over (network/proxy.py), never by the
    host's interfaces.
    """
    binary = bwrap_path()
    assert binary is not None
    argv = [binary, *ISOLATED, "--hostname", "sandbox"]
    if os.geteuid() == 0 or launch.overlay:
        argv += ["--cap-drop", "ALL"]
    if seccomp_fd is not None:
        argv += ["--seccomp", str(seccomp_fd)]
    # /dev/shm a private tmpfs (a batch empties it between calls), /dev itself read-only: nothing a call leaves there
    shm_mb = launch.memory_mb // SHM_SHARE
    argv += ["--ro-bind", "/", "/", "--dev", "/dev", *_tmpfs(DEV_SHM, shm_mb), "--remount-ro", "/dev", "--proc", "/proc"]
    tmp, real_project = Path(os.path.realpath("/tmp")), Path(os.path.realpath(project))
    for folder in mounts.hidden:
        argv += _tmpfs(str(folder), launch.memory_mb - shm_mb if is_inside(tmp, folder) else None)
    argv += mounts.binds
    if launch.project_writable:
        used = protected.project_venvs(project, venv) if venv is not None and not launch.venv_writable else []
        argv += ["--bind", str(project), str(project), *layout]
        argv += _read_only(path for path in used if str(path) not in layout)
    else:
        argv += ["--ro-bind", str(project), str(project)]
    argv += _read_only(path for path in interpreter_paths() if path.is_relative_to(project))
    for folder in mounts.hidden:  # last: bubblewrap made the mount points in them; never the project bound over one
        if not is_inside(tmp, folder) and not is_inside(folder, real_project):
            argv += ["--remount-ro", str(folder)]
    return [*argv, "--chdir", str(project), "--"]


def _tmpfs(folder: str, size_mb: int | None) -> list[str]:
    """A private tmpfs at `folder` holding at most `size_mb` MiB (None: a read-only one, remounted after its binds),
    unbounded where bubblewrap cannot size one (older than 0.8, or setuid)."""
    if size_mb is None or not tmpfs_size_works():
        return ["--tmpfs", folder]
    return ["--size", str(max(size_mb, 1) << 20), "--tmpfs", folder]


def host_mounts(root: Path, read_only: Iterable[Path] = (), masked: Iterable[Path] = ()) -> HostMounts:
    """The `HostMounts` of a project at `root` whose toolchain shows the `read_only` folders with `masked` hidden:
    homes, /tmp and the folders holding host sockets hidden behind an empty tmpfs where they exist, each toolchain
    folder under one bound read-only (never one that is or holds a host socket folder), then every secret inside one
    masked."""
    environ, sockets = tuple(map(os.environ.get, HIDING_ENVIRON)), socket_folders()
    candidates = [Path("/root"), Path("/home"), Path(os.path.expanduser("~")), *sockets]
    hidden = outermost(candidates)
    argv: list[str] = []  # each hidden folder's tmpfs comes first, sized for the launch (`_bwrap`)
    resolv = Path("/etc/resolv.conf").resolve()  # often a link into /run (systemd-resolved)
    if resolv.is_file() and any(is_inside(resolv, folder) for folder in hidden):
        argv += ["--ro-bind", str(resolv), str(resolv)]
    argv += ["--dir", SANDBOX_HOME]
    argv += _read_only(path for path in interpreter_paths()
                       if any(is_inside(path, folder) for folder in hidden) and not is_inside(path, root))
    bound: list[Path] = []
    for folder in sorted(read_only, key=lambda path: len(path.parts)):
        if any(is_inside(folder, parent) for parent in bound) or not any(is_inside(folder, h) for h in hidden):
            continue
        bound.append(folder)
        if not any(is_inside(socket, Path(os.path.realpath(folder))) for socket in sockets):
            argv += ["--ro-bind", str(folder), str(folder)]
    for secret in masked:  # wherever it is seen: in a folder bound into a hidden one, or through the read-only root
        seen = any(is_inside(secret, folder) for folder in bound) or not any(is_inside(secret, h) for h in hidden)
        if secret.is_symlink() or not seen:
            continue  # a symlink's target is masked in its own right
        argv += ["--tmpfs", str(secret), "--remount-ro", str(secret)] if secret.is_dir() else ["--ro-bind", "/dev/null", str(secret)]
    return HostMounts(tuple(hidden), tuple(argv), environ, tuple(path for path in candidates if not path.exists()))


def is_inside(path: Path, folder: Path) -> bool:
    """`path` is `folder` or lies under it (both absolute and normalized; compared as text, pathlib is slow here)."""
    inner, outer = str(path), str(folder)
    return inner == outer or inner.startswith(outer if outer.endswith("/") else outer + "/")


def socket_folders() -> list[Path]:
    """The real paths of the host's socket folders, $XDG_RUNTIME_DIR included."""
    runtime_dir = os.environ.get("XDG_RUNTIME_DIR")
    extra = [runtime_dir] if runtime_dir and os.path.isabs(runtime_dir) else []
    return [Path(os.path.realpath(folder)) for folder in (*HOST_SOCKET_FOLDERS, *extra)]


def outermost(paths: list[Path]) -> list[Path]:
    """The existing `paths` resolved, but / and those inside another."""
    unique: list[Path] = []
    for path in paths:
        resolved = path.resolve() if path.exists() else None
        if resolved is None or resolved == Path("/") or any(is_inside(resolved, folder) for folder in unique):
            continue
        unique = [folder for folder in unique if not is_inside(folder, resolved)] + [resolved]
    return unique


def worker_argv(channel_fd: int, project: Path, private: Iterable[Path] = (), net_fd: int | None = None) -> list[str]:
    """The worker's command line; `private`: the tmpfs folders a batch empties between its calls; `net_fd` is where it
    hands over its network proxy listener (worker.py)."""
    net = [f"net={net_fd}:{PROXY_PORT}"] if net_fd is not None else []
    return [sys.executable, "-I", "-B", str(WORKER_SCRIPT), str(channel_fd), str(project), str(PACKAGE_PARENT),
            *(f"private={folder}" for folder in private), *net]


@dataclass(frozen=True)
class OverlayDirs:
    """One worker's overlay folders in `folder`: `upper` receives everything the run writes; `work` is the kernel's."""

    folder: Path
    rootless: bool

    @property
    def upper(self) -> Path:
        return self.folder / "upper"

    def remove(self) -> None:
        """Delete the folders (the kernel's work folder may be mode 000 for a user without privileges)."""
        for inner in (self.folder / "work" / "work", self.folder / "work" / "index"):
            with contextlib.suppress(OSError):
                os.chmod(inner, 0o700)
        shutil.rmtree(self.folder, ignore_errors=True)


def prepare(scratch: Path) -> OverlayDirs:
    """Fresh upper and work folders under `scratch` (outside the project, as the kernel requires)."""
    folder = Path(tempfile.mkdtemp(prefix="overlay-", dir=scratch))
    dirs = OverlayDirs(folder, rootless=os.geteuid() != 0)
    dirs.upper.mkdir()
    (folder / "work").mkdir()
    return dirs


def overlay_prefix(dirs: OverlayDirs, lower: Path) -> list[str]:
    """The command prefix that mounts the overlay of `lower` (the project), its upper and work folders `dirs`', over it
    in a new mount namespace (a new user namespace too, mapped to the caller, without privileges), then execs the rest
    of the command line (bubblewrap)."""
    options = f"{'userxattr,' if dirs.rootless else ''}{OVERLAY_OPTIONS}"
    user = ["--user", "--map-root-user"] if dirs.rootless else []
    return [shutil.which("unshare") or "unshare", "--mount", "--propagation", "private", *user, "--", "/bin/sh", "-c",
            OVERLAY_MOUNT, "overlay", str(dirs.folder), options, str(lower)]


def sandbox_env(*, home: str, tmpdir: str, tier: str, token: str, toolchain: Toolchain | None = None) -> dict[str, str]:
    """The allow-listed environment agent code sees: no secret can be in it; `toolchain` adds PATH and build variables."""
    env = {key: os.environ[key] for key in ALLOWED_ENV if key in os.environ}
    if toolchain is not None:
        env.update(toolchain.env, PATH=":".join(toolchain.path))
    env.update(
        PATH=env.get("PATH") or ":".join([str(Path(sys.executable).parent), *SYSTEM_PATH]),
        HOME=home,
        TMPDIR=tmpdir,
        PYTHONDONTWRITEBYTECODE="1",
        PYTHONIOENCODING="utf-8",
        TUIAGENT_SANDBOX=tier,
        TUIAGENT_SANDBOX_RUN=token,
    )
    env.setdefault("LANG", "C.UTF-8")
    return env


@functools.cache
def interpreter_paths() -> tuple[Path, ...]:
    """What the worker interpreter needs to be visible: prefixes, the executable's folder, the tui_agent package."""
    paths = {Path(sys.prefix), Path(sys.base_prefix), Path(sys.exec_prefix), Path(sys.base_exec_prefix),
             Path(os.path.realpath(sys.executable)).parent, Path(sys.executable).parent, PACKAGE_PARENT}
    return tuple(sorted({p.resolve() for p in paths if p.exists()}))


def project_layout(project: Path, launch: Launch) -> tuple[str, ...]:
    """The binds keeping a writable bubblewrap run off the project's protected paths (`.git`'s config, hooks and the
    like only, for an overlay run: what a commit needs stays writable) and, unless `launch.venv_writable`, its `.venv`
    and `venv` (a test run must not plant a .pth in a virtualenv run later), looked at anew for each launch: a warm
    worker started under other binds must not be used. No other launch's command line depends on them (a read-only
    project is bound whole): nothing to look at before its runs."""
    if not launch.project_writable or launch.tier != TIER_BUBBLEWRAP:
        return ()
    venvs = [] if launch.venv_writable else protected.project_venvs(project, None)
    return (*protected.read_only_binds(project, git_commits=launch.overlay), *_read_only(venvs))


def _read_only(paths: Iterable[Path]) -> list[str]:
    return [argument for path in paths for argument in ("--ro-bind", str(path), str(path))]


def bwrap_path() -> str | None:
    return shutil.which("bwrap")


@functools.cache
def probe_bubblewrap() -> str | None:
    """None when bubblewrap really works here (tried once per process), else the reason it does not."""
    binary = bwrap_path()
    if binary is None:
        return "bwrap is not installed (Debian/Ubuntu: apt-get install bubblewrap)"
    if tmpfs_size_works():  # the same try with a sized /tmp: one spawn where bubblewrap is 0.8 or later
        return None
    return _tried([binary, *PROBE_MOUNTS, "--tmpfs", "/tmp", "true"], "bwrap fails here")


@functools.cache
def tmpfs_size_works() -> bool:
    """bubblewrap works here and can bound a tmpfs (`--size`: 0.8 and later, never setuid); tried once per process."""
    return _tried([bwrap_path() or "bwrap", *PROBE_MOUNTS, "--size", str(1 << 20), "--tmpfs", "/tmp", "true"], "") is None


def _tried(argv: list[str], failing: str) -> str | None:
    """None when `argv` exits 0 within 10 s, else `failing` with its error output."""
    try:
        done = subprocess.run(argv, capture_output=True, timeout=10, env={"PATH": "/usr/bin:/bin"})
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"{failing}: {error}"
    if done.returncode == 0:
        return None
    return f"{failing}: {done.stderr.decode(errors='replace').strip() or f'exit status {done.returncode}'}"


def probe_overlay(scratch: Path) -> str | None:
    """None when an overlay can be mounted here the way runs mount it (tried once per process), else why not."""
    with _probe_lock:
        if not _overlay_probed:
            _overlay_probed.append(_try_overlay(scratch))
        return _overlay_probed[0]


def _try_overlay(scratch: Path) -> str | None:
    """The overlay mount of a run, tried on folders of the probe's own under `scratch`."""
    if shutil.which("unshare") is None:
        return "util-linux's `unshare` is not installed"
    dirs = prepare(scratch)
    lower = dirs.folder / "lower"
    try:
        lower.mkdir()
        (lower / "f").write_text("x")
        problem = _tried([*overlay_prefix(dirs, lower), "/bin/sh", "-c", 'rm "$1/f" && echo y > "$1/g"', "sh", str(lower)],
                         "an overlay mount fails here")
        if problem is None and (not (dirs.upper / "g").is_file() or (lower / "g").exists() or not (lower / "f").exists()):
            return "an overlay mount does not keep writes apart here"
        return problem
    finally:
        dirs.remove()
