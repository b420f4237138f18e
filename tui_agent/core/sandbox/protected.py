"""What agent code may never change or leave in the project, even in a run that may write it: the protected paths,
git's own folder but for what commits write, and nested repositories, setuid and setgid bits, special files and hard
links out of the run's writes.

Existing protected paths are bound read-only inside bubblewrap (`.agent/` as a whole, so it cannot be renamed away: a
mount point cannot be renamed). A missing one is not blocked during the run: a bind needs a mount point, which would be
a new file in the person's project for as long as the sandbox lives (a pre-started worker waits for its run: up to the
session); removing it on the host detaches the sandbox's mount (the kernel lazily unmounts a mount point unlinked in
another namespace), and Landlock and seccomp cannot refuse one name in a folder while allowing others there. So a run
through an overlay gets it refused by the harvest (`Guard`, harvest.py), and a writable run without one is swept after
it (ignored.py). What is refused is copied or moved to `.agent/quarantine/` and said."""

from __future__ import annotations

import os
import re
import secrets
import shutil
import stat
import time
from dataclasses import dataclass
from pathlib import Path

from tui_agent.core import globs
from tui_agent.core.project import AGENT_DIR, ConfigError, Project
from tui_agent.core.sandbox.policy import RunResult
from tui_agent.core.versioning.hookspath import hooks_path

PROTECTED_NAMES: tuple[str, ...] = (
    ".git", AGENT_DIR, ".vscode", ".idea", ".envrc", ".mcp.json", ".gitmodules", ".gitconfig",
    ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc", ".zshenv", ".zprofile",
    ".zlogin", ".zlogout", ".kshrc", ".cshrc", ".tcshrc", ".inputrc",
    ".husky", ".pre-commit-config.yaml", "lefthook.yml", ".lefthook.yml",
)
"""Paths relative to the project root, protected whether or not they exist (the last line: hook managers whose
files decide what a git hook runs, outside the sandbox, at the next catalog commit)."""
QUARANTINE = f"{AGENT_DIR}/quarantine"
MAX_GLOB_MATCHES = 500
GLOB_WATCH_LIMIT = 20_000
"""Matches of the user's globs recorded before a run without an overlay; past this many, new ones are not told apart."""
REFUSED = "refused: "
"""In every note about a write the sandbox refused: the call that made it is not shown as a success."""
GIT = ".git"
GIT_COMMIT_FOLDERS = frozenset({"objects", "refs", "logs", "lfs"})
GIT_COMMIT_FILES = frozenset({
    "index", "HEAD", "COMMIT_EDITMSG", "ORIG_HEAD", "FETCH_HEAD", "MERGE_HEAD", "MERGE_MSG", "MERGE_MODE", "MERGE_RR",
    "CHERRY_PICK_HEAD", "REVERT_HEAD", "REBASE_HEAD", "AUTO_MERGE", "packed-refs",
})
GIT_NOT_DATA = frozenset({"objects/info/alternates", "objects/info/http-alternates"})
"""What of the project's own `.git` an approved writable run may change: what commits and merges write. Everything
else there (`config`, `hooks/`, `info/`, `modules/`, `commondir`, where objects come from, and a rebase's or
cherry-pick's state, whose to-do list may `exec` commands when the person continues it) decides what git runs or
reads from where, on the person's machine: never applied."""
GIT_READ_ONLY = ("config", "config.worktree", "commondir", "hooks", "info", "modules", "worktrees")
"""Entries of `.git` bound read-only inside a run that may commit, so that writing them fails at once."""
SETID_BITS = stat.S_ISUID | stat.S_ISGID
QUARANTINED_GIT = "dot-git"
"""The name a refused `.git` gets in the quarantine: no git command takes the copy for a repository."""


def user_globs(root: Path) -> tuple[str, ...]:
    """`[sandbox] protected = [...]` from `.agent/config.toml` (a broken config protects nothing more here)."""
    try:
        return Project.at(root).load_settings().protected_globs
    except ConfigError:
        return ()


def fixed_names(root: Path) -> list[str]:
    """The fixed protected names and the hooks folder when it lies in the work tree."""
    hooks = hooks_path(root)
    return [*PROTECTED_NAMES, *([hooks] if hooks and not hooks.startswith(".git/") and hooks not in PROTECTED_NAMES
                                else [])]


def protected_paths(root: Path) -> list[str]:
    """Every protected path of the project, relative: the fixed names, the hooks folder, the user's globs."""
    paths = fixed_names(root)
    matches = globs.matching_paths(root, user_globs(root), limit=MAX_GLOB_MATCHES)
    return paths + [match for match in matches if match not in paths]


def matches_protected(root: Path, relative: str) -> str | None:
    """The protected entry `relative` (a project path, POSIX) falls under, or None."""
    return _entry_of(relative, protected_paths(root), user_globs(root))


def _entry_of(relative: str, paths: list[str], patterns: tuple[str, ...]) -> str | None:
    for entry in paths:
        if relative == entry or relative.startswith(entry + "/"):
            return entry
    return next((pattern for pattern in patterns if globs.matches(relative, [pattern])), None)


def _bindable(root: Path, relative: str) -> bool:
    """Whether the path exists and really lies inside the project (a symlink out of it is left to the harvest or the
    sweep). Plain `os.path` on strings: this runs for every protected name before every sandboxed run."""
    inside = os.path.join(root, relative)
    if not os.path.exists(inside):
        return False
    real, top = os.path.realpath(inside), str(root)
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)


def read_only_binds(root: Path, *, git_commits: bool = False) -> list[str]:
    """bwrap arguments binding every existing protected path read-only (after the project's writable bind).

    `git_commits` (a run whose writes the harvest filters: an overlay run) leaves the project's `.git` folder
    writable but for its config, hooks and the like (`GIT_READ_ONLY`, a `core.hooksPath` in `.git` too), so that the
    run can commit."""
    names = protected_paths(root)
    if git_commits and os.path.isdir(os.path.join(root, GIT)) and not os.path.islink(os.path.join(root, GIT)):
        hooks = hooks_path(root)
        inside = [f"{GIT}/{name}" for name in GIT_READ_ONLY]
        inside += [hooks] if hooks and hooks.startswith(GIT + "/") and hooks not in inside else []
        index = names.index(GIT)
        names[index:index + 1] = inside
    return [arg for relative in names if _bindable(root, relative) for arg in
            ("--ro-bind", str(root / relative), str(root / relative))]


def layout(root: Path) -> tuple[tuple[str, bool], ...]:
    """Which protected paths are bound: a warm worker started under another layout must not be used."""
    inside_git = tuple((f"{GIT}/{name}", _bindable(root, f"{GIT}/{name}")) for name in GIT_READ_ONLY)
    return (*((relative, _bindable(root, relative)) for relative in protected_paths(root)), *inside_git)


@dataclass(frozen=True)
class Guard:
    """The protected paths a run may neither create, replace nor delete: the fixed names and the hooks folder
    (`names`), the user's globs (outside `.git` and `.agent`; `matches`: what they match now), and where a protected
    symlink pointing nowhere yet lands (`landings`: creating that file would give the protected path its content).

    `fixed` is what a run without an overlay could create or replace (`ignored.sweep` moves it after the run): protected
    paths that are absent (None) or symlinks (their target; a bind protects only what a link points to), landings."""

    fixed: dict[str, str | None]
    matches: frozenset[str] = frozenset()
    patterns: tuple[str, ...] = ()
    names: frozenset[str] = frozenset()
    landings: frozenset[str] = frozenset()

    @classmethod
    def of(cls, root: Path, limit: int = MAX_GLOB_MATCHES) -> "Guard":
        names, patterns = frozenset(fixed_names(root)), user_globs(root)
        matches = frozenset(globs.matching_paths(root, patterns, limit=limit))
        links = {path: os.readlink(root / path) for path in names | matches if os.path.islink(root / path)}
        real_root, landings = os.path.realpath(root), set[str]()
        for relative in links:
            landing = os.path.realpath(root / relative)
            if not (root / relative).exists() and landing.startswith(real_root + os.sep):
                landings.add(Path(landing).relative_to(real_root).as_posix())
        absent = [name for name in names if not os.path.lexists(root / name)]
        return cls({**dict.fromkeys(landings), **links, **dict.fromkeys(absent)}, matches, patterns, names,
                   frozenset(landings))

    def covers(self, relative: str, folder: bool) -> bool:
        if relative in self.names or relative in self.landings:
            return True
        if not folder and any(landing.startswith(relative + "/") for landing in self.landings):
            return True  # a file or link where a protected link's target needs a folder
        return relative.split("/", 1)[0] not in (GIT, AGENT_DIR) and globs.matches(relative, self.patterns)

    def to_json(self) -> dict[str, object]:
        """The crash record of a run without an overlay (what `sweep` needs)."""
        return {"fixed": self.fixed, "globbed": sorted(self.matches), "patterns": list(self.patterns)}

    @classmethod
    def from_json(cls, data: object, root: Path) -> "Guard | None":
        """A record read back from `.agent/cache` (untrusted): only protected paths, only strings, the person's globs
        now (not the record's); None if malformed."""
        if not isinstance(data, dict):
            return None
        fixed, globbed, patterns = data.get("fixed"), data.get("globbed"), data.get("patterns")
        if not (isinstance(fixed, dict) and isinstance(globbed, list) and isinstance(patterns, list)):
            return None
        paths, now = protected_paths(root), user_globs(root)
        clean = {name: link for name, link in fixed.items() if isinstance(name, str) and ".." not in Path(name).parts
                 and _entry_of(name, paths, now) is not None and (link is None or isinstance(link, str))}
        return cls(clean, frozenset(p for p in globbed if isinstance(p, str)), now)


def moved_note(verb: str, relative: str, where: str, link: str | None, restored: bool = True) -> str:
    """What the person and the model are told of a protected path a run created or replaced (`link`: the symlink
    that was there, in place again unless not `restored`)."""
    put_back = ("" if link is None else f"; the symlink to {link} was put back" if restored else
                f"; it was a symlink to {link} (recreate it if you want it)")
    return (f"agent code {verb} the protected path {relative}; moved to {where}{put_back}; nothing else was changed: "
            "look at it, then delete it or move it back yourself")


def new_folder(root: Path) -> Path:
    """A new `.agent/quarantine/<time>-<id>/` folder (never made through a symlink)."""
    base = root / QUARANTINE
    base.mkdir(parents=True, exist_ok=True)
    if os.path.realpath(base) != os.path.join(os.path.realpath(root), QUARANTINE):
        raise OSError(f"{QUARANTINE} is not a plain folder of the project (a symlink on the way)")
    folder = base / f"{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}"
    folder.mkdir()
    return folder


def git_inner(relative: str) -> str | None:
    """The path inside the project's own `.git` (`""` for `.git` itself), or None outside it."""
    if relative == GIT:
        return ""
    return relative[len(GIT) + 1:] if relative.startswith(GIT + "/") else None


def inert(relative: str) -> str:
    """`relative` with every `.git` in it renamed: a copy kept there is no repository for git."""
    return "/".join(QUARANTINED_GIT if part == GIT else part for part in relative.split("/"))


def git_writable(inner: str) -> bool:
    """Whether a run may change `.git/<inner>` (a path inside git's folder, not `.git` itself)."""
    first = inner.split("/", 1)[0]
    return (first in GIT_COMMIT_FOLDERS and inner not in GIT_NOT_DATA) or inner in GIT_COMMIT_FILES


def git_refusal(inner: str, mode: int, git_folder: bool) -> str | None:
    """Why a run's `.git/<inner>` (of `mode`) may not be applied, or None (what a commit writes); `git_folder`: the
    project has a real `.git` folder."""
    if inner == "":
        return None if stat.S_ISDIR(mode) and git_folder else "the run made or replaced git's folder of the project"
    if inner.endswith(".lock"):
        return "a lock file an interrupted git command left (it would block your git)"
    if not git_writable(inner):
        what = inner if inner in GIT_NOT_DATA else inner.split("/", 1)[0]
        return (f"git's {what} decides what git runs or reads on your machine; a run may change "
                "only what commits need in .git (objects, refs, logs, index, HEAD)")
    return None if stat.S_ISREG(mode) or stat.S_ISDIR(mode) else "a symlink inside git's folder"


def move_under_git_lock(source: Path, target: Path) -> bool:
    """Put a run's version of a file in `.git` (the index, a ref) in place the way git does, through `<file>.lock`:
    False when a git command holds that lock now (its own rename would undo this one)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    lock = target.with_name(target.name + ".lock")
    try:
        handle = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        return False
    try:
        with os.fdopen(handle, "wb") as out, open(source, "rb") as data:
            shutil.copyfileobj(data, out)
            os.fchmod(out.fileno(), stat.S_IMODE(os.lstat(source).st_mode))
        os.replace(lock, target)
    except BaseException:
        lock.unlink(missing_ok=True)
        raise
    return True


def nested_repository(relative: str) -> bool:
    """A `.git` below the project root: a repository whose config and hooks tuiagent's own git would obey."""
    return relative.rsplit("/", 1)[-1] == GIT and "/" in relative


def special_kind(mode: int) -> str | None:
    """What kind of file the project must not receive (None for folders, files and symlinks)."""
    if stat.S_ISFIFO(mode):
        return "FIFO"
    if stat.S_ISSOCK(mode):
        return "socket"
    return "device node" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else None


def setid_words(mode: int) -> str:
    """"setuid", "setgid" or "setuid and setgid" for the bits `mode` carries."""
    return " and ".join(word for bit, word in ((stat.S_ISUID, "setuid"), (stat.S_ISGID, "setgid")) if mode & bit)


class HardLinks:
    """Which files of an upper folder share their data with a file outside it (a hard link out of the run's writes):
    counted once, on the first multiply-linked file met."""

    def __init__(self, upper: Path) -> None:
        self.upper = upper
        self._inside: dict[tuple[int, int], int] | None = None

    def outside(self, info: os.stat_result) -> bool:
        if info.st_nlink <= 1 or stat.S_ISDIR(info.st_mode):
            return False
        if self._inside is None:
            self._inside = {}
            for folder, folders, files in os.walk(self.upper):
                for name in (*folders, *files):
                    try:
                        found = os.lstat(os.path.join(folder, name))
                    except OSError:
                        continue
                    if found.st_nlink > 1 and not stat.S_ISDIR(found.st_mode):
                        key = (found.st_dev, found.st_ino)
                        self._inside[key] = self._inside.get(key, 0) + 1
        return self._inside.get((info.st_dev, info.st_ino), 0) < info.st_nlink


def copy_clean(source: Path, target: Path, links: HardLinks) -> None:
    """Copy `source` (an upper folder's entry) to `target` for the person to look at: folders, plain files without
    setuid or setgid bits, symlinks as links; no special file, no hard link out of the run, no `.git` by its name."""
    info = os.lstat(source)
    if stat.S_ISDIR(info.st_mode):
        target.mkdir(mode=0o700, parents=True, exist_ok=True)
        for entry in sorted(os.listdir(source)):
            copy_clean(source / entry, target / (QUARANTINED_GIT if entry == GIT else entry), links)
        os.chmod(target, (info.st_mode & 0o777) | 0o700)
    elif stat.S_ISLNK(info.st_mode):
        os.symlink(os.readlink(source), target)
    elif stat.S_ISREG(info.st_mode) and not links.outside(info):
        shutil.copyfile(source, target, follow_symlinks=False)
        os.chmod(target, info.st_mode & 0o777)


REFUSALS = ("read-only file system", "device or resource busy")
"""How a write to a read-only bind fails: in place, or by renaming a new version over it (git's lock files)."""
MAX_NOTES = 5

_WHY_GIT_INSIDE = ("git's config, hooks and info/ decide what git runs on your machine: they stay read-only even for "
                   "an approved run (the rest of .git, what a commit needs, is writable)")
_WHY_GIT = ("git's folder is read-only for this run: only a run whose writes go through an overlay (see `tuiagent "
            "sandbox status`) may commit, and then never change .git/config, hooks or info/")
_WHY = "a protected path (it decides what runs on your machine, or is tuiagent's own): read-only for agent code"


def refused_writes(root: Path, result: RunResult, *, git_commits: bool) -> list[str]:
    """One note per protected path a line of what the run said (`run_texts`) saying one of REFUSALS names;
    `git_commits`: the run could write what commits need in `.git`."""
    lines = [line for text in run_texts(result) if text for line in text.splitlines()
             if any(refusal in line.lower() for refusal in REFUSALS)]
    if not lines:  # the usual run: no protected path to list
        return []
    entries = sorted({*protected_paths(root), *(f"{GIT}/{name}" for name in GIT_READ_ONLY)},
                     key=len, reverse=True)
    notes: list[str] = []
    for line in lines:
        entry = _named(line, entries, str(root))
        note = f"{REFUSED}writing {entry} ({_why(entry, git_commits)})" if entry is not None else None
        if note is not None and note not in notes:
            notes.append(note)
    return notes[:MAX_NOTES]


def _named(line: str, entries: list[str], root: str) -> str | None:
    """The longest protected entry `line` names as a path (relative, or under the project's absolute path)."""
    text = line.replace(root.rstrip("/") + "/", "")
    for entry in entries:
        if re.search(rf"(^|[\s'\"`(:=./]){re.escape(entry)}($|[\s'\"`):/,])", text):
            return entry
    return None


def _why(entry: str, git_commits: bool) -> str:
    if entry.startswith(GIT + "/"):
        return _WHY_GIT_INSIDE if git_commits else _WHY_GIT
    if entry == GIT:
        return _WHY_GIT
    return _WHY


def run_texts(result: RunResult) -> list[str]:
    """What a run said: its output and error, and a shell command's own output (run_shell's report)."""
    texts = [result.stdout, result.stderr, result.error or ""]
    if isinstance(result.value, dict):
        texts += [str(result.value.get(name, "")) for name in ("stdout", "stderr")]
    return texts
