"""The one door every git process tuiagent starts goes through: an environment under which git runs nothing the
repository names (fsmonitor, hooks, filters, textconv, external diff, pagers, editors, signing and ssh programs,
credential helpers, merge drivers, the same keys pulled in by includes) unless the person approved it by trusting the
project; GitPython repositories are opened here too (`open_repo`)."""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tui_agent.core.errors import TuiAgentError
from tui_agent.core.tempfolders import owned_temp
from tui_agent.core.versioning.gitconfigscan import (
    CommandEntry, ConfigEntry, GitConfigError, command_entries, overrides, read_config,
)
from tui_agent.core.versioning.gitresult import GitFailure, git_timeout_s

if TYPE_CHECKING:
    import git

__all__ = ["CommandEntry", "GitConfigError", "GitDoorRefusal", "Scan", "approve", "base_env", "commit_env",
           "open_repo", "repo_env", "run_git", "scan", "scan_at"]

SAFE_CONFIG: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"), ("core.pager", "cat"), ("core.editor", ":"), ("sequence.editor", ":"),
    ("gc.auto", "0"), ("maintenance.auto", "false"), ("submodule.recurse", "false"), ("status.submoduleSummary", "false"),
    ("diff.ignoreSubmodules", "dirty"), ("protocol.ext.allow", "never"), ("core.untrackedCache", "false"),
)
"""Command-scope config for every git tuiagent runs before approval (command scope wins over every file)."""

SAFE_ENV = {"GIT_TERMINAL_PROMPT": "0", "GIT_PAGER": "cat", "GIT_EDITOR": ":", "GIT_SEQUENCE_EDITOR": ":",
            "GIT_ASKPASS": "", "SSH_ASKPASS": "", "GIT_CONFIG_PARAMETERS": "", "GIT_NO_REPLACE_OBJECTS": "1"}
"""Environment that beats config (git reads these before core.pager, core.editor, core.askPass...); replace refs
ignored: no object ever stands for another in what tuiagent reads, snapshots or puts back."""

MAX_HOOK_BYTES = 4 << 20
"""A hook's pin covers its first 4 MiB (a hook file is a script; a huge one is not read whole at every check)."""

RACY_NS = 50_000_000
"""A file changed less than this before a scan started is not cached: the filesystem's clock is coarse, so a second
change in the same tick (same size) could keep its ctime (git's own "racy" files)."""

_lock = threading.Lock()
_no_hooks: list[str] = []
_scans: dict[tuple[str, ...], tuple[tuple[tuple[str, "Stamp"], ...], "Scan"]] = {}
_approved: dict[str, str] = {}


class GitDoorRefusal(TuiAgentError, RuntimeError):
    """The repository's layout cannot be used safely (its git folder inside the work tree under another name, a
    work tree set elsewhere); the message is one line saying what and how to fix it."""


def no_hooks_dir() -> str:
    """An empty folder tuiagent owns, outside every project: core.hooksPath while the hooks are not approved."""
    with _lock:
        if not _no_hooks:
            folder = str(owned_temp("no-hooks"))
            atexit.register(shutil.rmtree, folder, True)
            _no_hooks.append(folder)
        return _no_hooks[0]


def config_env(pairs: list[tuple[str, str]]) -> dict[str, str]:
    """GIT_CONFIG_COUNT/KEY/VALUE variables passing `pairs` as command-scope config."""
    env = {"GIT_CONFIG_COUNT": str(len(pairs))}
    for index, (key, value) in enumerate(pairs):
        env[f"GIT_CONFIG_KEY_{index}"] = key
        env[f"GIT_CONFIG_VALUE_{index}"] = value
    return env


def base_env(*, reveal_hooks: bool = False) -> dict[str, str]:
    """The fixed part: enough for commands that never run a repository's filters or drivers (rev-parse, config,
    ls-files, check-ignore). `reveal_hooks` keeps the repository's core.hooksPath (to ask git where its hooks are)."""
    hooks = [] if reveal_hooks else [("core.hooksPath", no_hooks_dir())]
    return {**SAFE_ENV, **config_env([*SAFE_CONFIG, *hooks])}


@dataclass(frozen=True)
class Scan:
    """A repository's command-running configuration and hooks, as found now."""

    work_tree: Path
    entries: tuple[CommandEntry, ...]
    hooks: tuple[tuple[str, str], ...]  # (path shown to the person, sha256 of the hook file)
    files: tuple[str, ...]  # every file read (its change invalidates the scan)

    def digests(self) -> list[str]:
        return [entry.digest for entry in self.entries] + [hook_digest(path, sha) for path, sha in self.hooks]

    @property
    def digest(self) -> str:
        return approval_digest(self.digests())


def hook_digest(path: str, sha: str) -> str:
    return hashlib.sha256(f"hook\0{path}\0{sha}".encode()).hexdigest()


def approval_digest(digests: list[str]) -> str:
    """What trusting approves: the digests of every command-running entry and hook, as a set."""
    return hashlib.sha256("\n".join(sorted(digests)).encode()).hexdigest()


Stamp = tuple[int, int, int, int, int]
"""(mtime_ns, ctime_ns, size, inode, device) of a file, or all -1 when it is missing: a program can put a file's mtime
back, never its ctime, and a file written where none was changes the stamp from missing."""


def _stamp(paths: tuple[str, ...]) -> tuple[tuple[str, Stamp], ...]:
    stamps = []
    for path in paths:
        try:
            info = os.stat(path)
            stamps.append((path, (info.st_mtime_ns, info.st_ctime_ns, info.st_size, info.st_ino, info.st_dev)))
        except OSError:
            stamps.append((path, (-1, -1, -1, -1, -1)))
    return tuple(stamps)


def include_targets(entries: list[ConfigEntry], work_tree: Path) -> set[str]:
    """Every file an `include.path` or `includeIf.<condition>.path` names, whether git read it or not (missing now, or
    its condition unmet): one written or changed there later must lead to a new scan."""
    targets = set()
    for entry in entries:
        key = entry.key.lower()
        if not entry.value or not key.endswith(".path") or not key.startswith(("include.", "includeif.")):
            continue
        origin = entry.origin if os.path.isabs(entry.origin) else os.path.join(work_tree, entry.origin)
        targets.add(os.path.join(os.path.dirname(origin), os.path.expanduser(entry.value)))
    return targets


def scan(work_tree: Path, git_dir: Path, common_dir: Path) -> Scan:
    """The command-running configuration of one repository (cached until a file it read changes)."""
    home = os.path.expanduser("~")
    key = (str(work_tree), str(git_dir), str(common_dir), home, os.environ.get("GIT_CONFIG_GLOBAL", ""),
           os.environ.get("XDG_CONFIG_HOME", ""))
    with _lock:
        cached = _scans.get(key)
    if cached is not None and _stamp(cached[1].files) == cached[0]:
        return cached[1]
    base = [str(common_dir / "config"), str(git_dir / "config.worktree"), str(git_dir / "HEAD"),
            os.path.join(home, ".gitconfig")]
    started_ns = time.time_ns()
    entries = read_config(work_tree, {**os.environ, **base_env(), "GIT_DIR": str(git_dir),
                                      "GIT_WORK_TREE": str(work_tree)}, git_timeout_s(10.0))
    found = command_entries(entries, work_tree)
    hooks_folder = _hooks_folder(entries, work_tree, common_dir)
    hooks = _hooks(hooks_folder, work_tree)
    origins = {os.path.join(work_tree, e.origin) if not os.path.isabs(e.origin) else e.origin for e in entries}
    hook_files = (str(hooks_folder / name) for name in _names(hooks_folder))
    files = tuple(sorted({*base, *origins, *include_targets(entries, work_tree), str(hooks_folder), *hook_files}))
    result = Scan(work_tree, tuple(found), tuple(hooks), files)
    stamps = _stamp(files)
    if all(stamp[1] < started_ns - RACY_NS for _, stamp in stamps):
        with _lock:
            _scans[key] = (stamps, result)
    return result


def _hooks_folder(entries: list[ConfigEntry], work_tree: Path, common_dir: Path) -> Path:
    configured = [e.value for e in entries if e.key.lower() == "core.hookspath" and e.value and e.scope != "command"]
    if not configured:
        return common_dir / "hooks"
    folder = Path(os.path.expanduser(configured[-1]))
    return folder if folder.is_absolute() else work_tree / folder


def _names(folder: Path) -> list[str]:
    try:
        return sorted(os.listdir(folder))
    except OSError:
        return []


def _hooks(folder: Path, work_tree: Path) -> list[tuple[str, str]]:
    """Executable hook files (samples left out), each with its content's sha256."""
    found = []
    for name in _names(folder):
        path = folder / name
        if name.endswith(".sample") or not path.is_file() or not os.access(path, os.X_OK):
            continue
        try:
            with open(path, "rb") as hook:
                sha = hashlib.sha256(hook.read(MAX_HOOK_BYTES)).hexdigest()
        except OSError:
            sha = "unreadable"
        found.append((_shown(path, work_tree), sha))
    return found


def _shown(path: Path, work_tree: Path) -> str:
    try:
        return path.relative_to(work_tree).as_posix()
    except ValueError:
        return str(path)


def repo_env(work_tree: Path, git_dir: Path, common_dir: Path) -> dict[str, str]:
    """The door's environment for one repository: the fixed part plus an override for every command-running key its
    config (and what that includes) sets, so no filter, textconv or driver it names runs."""
    found = scan(work_tree, git_dir, common_dir)
    hooks = [("core.hooksPath", no_hooks_dir())]
    pinned = {"GIT_DIR": str(git_dir), "GIT_WORK_TREE": str(work_tree)}  # what was checked, whatever core.worktree says
    return {**SAFE_ENV, **pinned, **config_env([*SAFE_CONFIG, *hooks, *overrides(list(found.entries))])}


def worktree_problem(found: Scan, git_dir: Path) -> str | None:
    """A core.worktree naming a folder other than the one holding the repository (git would work there)."""
    for entry in found.entries:
        if entry.key.lower() == "core.worktree":
            target = os.path.realpath(os.path.join(git_dir, os.path.expanduser(entry.value)))
            if target != os.path.realpath(found.work_tree):
                return (f"the repository at {found.work_tree} sets its work tree to {target} (core.worktree in "
                        f"{entry.origin}): tuiagent works only in the folder holding .git. Remove that setting to use it.")
    return None


def approve(root: Path, digest: str) -> None:
    """Trust approved the command-running configuration whose `approval_digest` is `digest` for the repository
    holding `root`: commits made for the person run under it while it stays the same."""
    with _lock:
        _approved[os.path.realpath(root)] = digest


def withdraw(root: Path) -> None:
    """The project is no longer trusted (revoked, or its grants changed): its configuration is neutralised again."""
    with _lock:
        _approved.pop(os.path.realpath(root), None)


def approved(root: Path, found: Scan) -> bool:
    """Whether the person approved exactly this configuration (for the project at `root`)."""
    with _lock:
        return _approved.get(os.path.realpath(root)) == found.digest


def commit_env(root: Path, work_tree: Path, git_dir: Path, common_dir: Path) -> dict[str, str] | None:
    """The environment of the commits made for the person: git's own behaviour (hooks, filters, signing) when
    the project's configuration is approved as it is now, else None (the door's environment applies)."""
    found = scan(work_tree, git_dir, common_dir)
    if not approved(root, found) and not (_trust_approves(root) and approved(root, found)):
        return None
    return {"GIT_CONFIG_COUNT": "0", "GIT_TERMINAL_PROMPT": "0", "GIT_EDITOR": ":", "GIT_CONFIG_PARAMETERS": ""}


_trust_lookup: Callable[[Path], bool] | None = None


def ask_trust_with(lookup: Callable[[Path], bool]) -> None:
    """Workspace trust (trust.check) says how to ask it afresh whether the project at a root is trusted: versioning
    sits below trust and never imports it. Until it does, nothing is approved that was not `approve`d."""
    global _trust_lookup
    _trust_lookup = lookup


def _trust_approves(root: Path) -> bool:
    """Ask workspace trust afresh (its check approves the configuration it was trusted with, see trust.check)."""
    return _trust_lookup is not None and _trust_lookup(root)


def layout_problem(work_tree: Path, git_dir: Path, start: Path | None = None) -> str | None:
    """Why a repository cannot be used, or None: its git folder or common dir (`commondir`: config, hooks, refs,
    objects) inside the work tree but not at `.git` (agent code could write it), another checkout's `.git` (a `.git`
    file or link naming it: tuiagent would write that repository), or a work tree (core.worktree) other than the
    folder holding the `.git` found from `start`."""
    real_tree, real_git = Path(os.path.realpath(work_tree)), Path(os.path.realpath(git_dir))
    real_common = Path(os.path.realpath(common_dir_of(real_git)))
    for folder, what in ((real_git, "git folder"), (real_common, "git common dir (.git/commondir)")):
        if folder.is_relative_to(real_tree) and not folder.is_relative_to(real_tree / ".git"):
            return (f"the {what} of {real_tree} is {folder}, inside the work tree (pointing into the project): "
                    "tuiagent will not use it. Move it to .git, or point .git elsewhere outside the project.")
    holder = dot_git_holder(start) if start is not None and "GIT_WORK_TREE" not in os.environ else None
    if holder is not None and Path(os.path.realpath(holder)) != real_tree:
        return (f"the repository at {holder} sets its work tree to {real_tree} (core.worktree): tuiagent works only "
                f"in the folder holding .git. Remove core.worktree from {real_git / 'config'} to use it here.")
    if real_git.name == ".git" and real_git.parent != real_tree:
        return (f"the .git of {real_tree} names {real_git}, the git folder of another checkout ({real_git.parent}): "
                "tuiagent will not write that repository. Replace the .git file or link with the project's own "
                "repository (git init, or a clone).")
    return None


def common_dir_of(git_dir: Path) -> Path:
    """The folder git keeps a repository's config, hooks, refs and objects in: the one `commondir` names (a linked
    worktree's), else the git folder itself."""
    try:
        named = (git_dir / "commondir").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return git_dir
    return git_dir / named if named else git_dir


def dot_git_holder(start: Path) -> Path | None:
    """The nearest folder from `start` upwards with a `.git` entry (what git finds first), or None."""
    folder = Path(os.path.abspath(start))
    for candidate in (folder, *folder.parents):
        if os.path.lexists(candidate / ".git"):
            return candidate
    return None


def open_repo(path: Path, *, search_parent_directories: bool = True) -> git.Repo:
    """A GitPython repository whose every git command goes through the door. Raises git.InvalidGitRepositoryError
    or git.NoSuchPathError outside a repository, GitDoorRefusal or GitConfigError for one that cannot be used."""
    import git

    repo = git.Repo(path, search_parent_directories=search_parent_directories, expand_vars=False)
    if repo.working_tree_dir is None:
        repo.git.update_environment(**base_env())
        return repo
    work_tree = Path(repo.working_tree_dir).resolve()
    problem = layout_problem(work_tree, Path(repo.git_dir), Path(path))
    if problem is not None:
        repo.close()
        raise GitDoorRefusal(problem)
    git_dir, common_dir = Path(repo.git_dir).resolve(), Path(repo.common_dir).resolve()
    try:
        problem = worktree_problem(scan(work_tree, git_dir, common_dir), git_dir)
        if problem is not None:
            raise GitDoorRefusal(problem)
        repo.git.update_environment(**repo_env(work_tree, git_dir, common_dir))
    except (GitConfigError, GitDoorRefusal):
        repo.close()
        raise
    return repo


def init_repo(root: Path) -> None:
    """`git init` at `root` (the person's init.templateDir applies: it is theirs)."""
    done = subprocess.run(["git", "init", "-q", str(root)], capture_output=True, text=True,
                          env={**os.environ, **base_env()}, timeout=git_timeout_s())
    if done.returncode != 0:
        last = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit {done.returncode}"
        raise GitFailure(f"git init failed in {root}: {last}")


def run_git(cwd: Path, *args: str, env: dict[str, str] | None = None, timeout: float | None = None,
            text: bool = False, reveal_hooks: bool = False,
            stdin: bytes | None = None) -> subprocess.CompletedProcess:  # type: ignore[type-arg]
    """`git ARGS` in `cwd` with the door's fixed environment (commands that read no file through a filter: rev-parse,
    ls-files, check-ignore), on top of `env` (default: the process's); `stdin`: its input. Raises OSError or
    TimeoutExpired."""
    merged = {**(env if env is not None else os.environ), **base_env(reveal_hooks=reveal_hooks)}
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=text, env=merged, input=stdin,
                          timeout=timeout if timeout is not None else git_timeout_s())


def scan_at(root: Path) -> Scan | None:
    """The scan of the repository holding `root` (None outside one). Raises GitConfigError or GitDoorRefusal."""
    try:
        done = run_git(root, "rev-parse", "--show-toplevel", "--absolute-git-dir", "--git-common-dir", text=True)
    except subprocess.TimeoutExpired:
        raise GitConfigError(f"git did not answer within {git_timeout_s():g} s in {root}") from None
    except OSError:
        return None
    lines = done.stdout.splitlines()
    if done.returncode != 0 or len(lines) != 3:
        message = next((line for line in done.stderr.splitlines() if line.startswith("fatal:")), "")
        if "not a git repository" in message or not message:
            return None
        raise GitConfigError(f"git cannot use the repository holding {root}: {message.removeprefix('fatal: ')}")
    work_tree, git_dir = Path(lines[0]), Path(lines[1])
    common = Path(lines[2]) if os.path.isabs(lines[2]) else root / lines[2]
    problem = layout_problem(work_tree, git_dir, root)
    if problem is not None:
        raise GitDoorRefusal(problem)
    return scan(work_tree.resolve(), git_dir.resolve(), common.resolve())
