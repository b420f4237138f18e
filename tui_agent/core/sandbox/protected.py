"""What agent code may never change or leave in the project, even in a run that may write it: the protected paths
(with git's folder and common dir where they lie in the work tree), git's own folder but for what commits write, and
the kinds of entry a run may not leave (nested repositories, setuid and setgid bits, special files), which
leftovers.py judges.

Existing protected paths are bound read-only inside bubblewrap (`.agent/` as a whole, so it cannot be renamed away: a
mount point cannot be renamed). A missing one is not blocked during the run: a bind needs a mount point, which would be
a new file in the person's project for as long as the sandbox lives (a pre-started worker waits for its run: up to the
session); removing it on the host detaches the sandbox's mount (the kernel lazily unmounts a mount point unlinked in
another namespace), and Landlock and seccomp cannot refuse one name in a folder while allowing others there. So a run
through an overlay gets it refused by the harvest (`Guard`, harvest.py), and a writable run without one is swept after
it (ignored.py). What is refused is copied or moved to `.agent/quarantine/` and said. The project's stamps as a
writable run starts (`LowerState`) tell a change someone made during the run from one the run made: the person's work
is never taken for the run's."""

from __future__ import annotations

import contextlib
import os
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path

from tui_agent.core import globs, projectfs
from tui_agent.core.project import AGENT_DIR, ConfigError, Project
from tui_agent.core.versioning.gitintake import GIT_COMMIT_FILES
from tui_agent.core.versioning.hookspath import hooks_path

PROTECTED_NAMES: tuple[str, ...] = (
    ".git", AGENT_DIR, ".vscode", ".idea", ".envrc", ".mcp.json", ".gitmodules", ".gitconfig",
    ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc", ".zshenv", ".zprofile",
    ".zlogin", ".zlogout", ".kshrc", ".cshrc", ".tcshrc", ".inputrc",
    ".husky", ".pre-commit-config.yaml", ".lefthook", ".lefthook-local",
    *(f"{where}lefthook{local}.{kind}" for where in ("", ".", ".config/") for local in ("", "-local")
      for kind in ("yml", "yaml", "toml", "json", "jsonc")),
)
"""Paths relative to the project root, protected whether or not they exist (the last lines: hook managers whose
files decide what a git hook runs, outside the sandbox, at the next catalog commit: every config lefthook reads)."""
QUARANTINE = f"{AGENT_DIR}/quarantine"
MAX_GLOB_MATCHES = 500
GLOB_WATCH_LIMIT = 20_000
"""Matches of the user's globs recorded before a run without an overlay; past this many, new ones are not told apart."""
REFUSED = "refused: "
"""In every note about a write the sandbox refused: the call that made it is not shown as a success."""
GIT = ".git"
GIT_READ_ONLY = ("config", "config.worktree", "commondir", "hooks", "info", "modules", "worktrees")
"""Entries of `.git` bound read-only inside a run that may commit, so that writing them fails at once."""
SETID_BITS = stat.S_ISUID | stat.S_ISGID
REPOSITORY_MARKS = frozenset({"HEAD", "commondir", "objects", "refs"})
REPOSITORY = ("a git repository inside the project (its config and hooks would run commands on your machine when git "
              "works there)")
OUTSIDE = "outside what the run wrote"
"""Where a hard link the run left leads when not to a file the project had before the run."""


STARTUP_NAMES = frozenset({"sitecustomize.py", "usercustomize.py"})
WALK_LIMIT = 100_000
"""Entries of the project stamped before a run at most; past it, paths not stamped are judged by their change time
(harvest.py; ignored.compare walks for what changed since the run started), and changes among ignored files may go
unreported."""
SKIPPED = frozenset({GIT, AGENT_DIR})
"""Top-level folders not walked (git's objects, tuiagent's own files): judged by their change time, but for what a
commit writes in `.git` (index, HEAD, refs, logs: up to GIT_STAMP_LIMIT entries)."""
GIT_STAMP_LIMIT = 10_000
CHANGE_SLACK_NS = 20_000_000
"""Only for paths a run's start stamps do not cover (a run recovered after a crash has none; past WALK_LIMIT): file
times come from a coarse clock (one tick, a few ms, behind), so a change this soon before the run counts as during it.
That errs towards keeping a person's version and setting the run's aside (harvest.py), towards judging a path as the
run's (ignored.refuse_left), never the other way."""
Stamp = tuple[int, int, int]  # size, mtime_ns, ctime_ns (agent code can reset mtime, never ctime)
FullStamp = tuple[int, int, int, int, int]
"""st_ino, st_mode, st_size, st_mtime_ns, st_ctime_ns (its last three: a `Stamp`)."""


def is_startup_file(name: str) -> bool:
    return name.endswith(".pth") or name in STARTUP_NAMES


@dataclass
class LowerState:
    """The project as a writable run starts (an overlay run's lower layer is the live project): `stamps`, project path
    (relative, POSIX; "" the project itself; absolute outside it) -> its stamp then, so a change someone made during
    the run is told from one made before it by comparing, not by file times; `complete` when every entry outside
    SKIPPED was stamped; `taken_ns`, the time the walk started."""

    stamps: dict[str, FullStamp] = field(default_factory=dict)
    complete: bool = True
    taken_ns: int = 0

    def knows(self, relative: str) -> bool:
        """Whether `relative`'s state at the start is known (stamped, or surely absent then)."""
        return relative in self.stamps or (self.complete and relative.split("/", 1)[0] not in SKIPPED)

    def matches(self, relative: str, info: os.stat_result) -> bool:
        """Whether `relative`, now `info`, is as it was at the start (False: it was not there)."""
        return self.stamps.get(relative) == stamp_of(info)

    @classmethod
    def take(cls, root: Path, limit: int = WALK_LIMIT, sites: list[Path] | None = None, *,
             since_ns: int | None = None) -> "LowerState":
        """Stamp every entry under `root` (never following links) up to `limit` entries, then what commits write, then
        the start-up files of the `sites` folders (`site_dirs`: those outside the project too); `since_ns`: only the
        entries changed since then (a change time agent code cannot set back), and nothing more."""
        state = cls(taken_ns=time.time_ns())
        pending = [("", str(root))]
        while pending and (state.complete or since_ns is not None):  # one unreadable folder stops no later walk
            relative, folder = pending.pop()
            try:
                with os.scandir(folder) as found:
                    entries = [entry for entry in found if relative or entry.name not in SKIPPED]
                state.stamp(relative, os.lstat(folder), since_ns)
            except OSError:  # gone meanwhile, or unreadable: its entries are judged by their change time
                state.complete = False
                continue
            for entry in entries:
                if len(state.stamps) >= limit:
                    state.complete = False
                    break
                path = f"{relative}/{entry.name}" if relative else entry.name
                if entry.is_dir(follow_symlinks=False):
                    pending.append((path, entry.path))
                else:
                    with contextlib.suppress(OSError):
                        state.stamp(path, entry.stat(follow_symlinks=False), since_ns)
        if since_ns is not None:
            return state
        state.stamp_git(root)
        for site in sites or []:
            with contextlib.suppress(OSError):
                for name in [name for name in os.listdir(site) if is_startup_file(name)]:
                    with contextlib.suppress(OSError):
                        state.stamps[shown(site / name, root)] = stamp_of(os.lstat(site / name))
        return state

    def stamp(self, relative: str, info: os.stat_result, since_ns: int | None) -> None:
        if since_ns is None or info.st_ctime_ns >= since_ns:
            self.stamps[relative] = stamp_of(info)

    def stamp_git(self, root: Path) -> None:
        """Stamp what a commit writes in the project's `.git` (not the objects, which are new when written): a commit
        of the person's during the run is then told from the run's by comparing, not by change times."""
        git = root / GIT
        if not git.is_dir() or git.is_symlink():
            return
        paths = [git / name for name in GIT_COMMIT_FILES]
        for folder in ("refs", "logs"):
            for current, folders, files in os.walk(git / folder):  # os.walk follows no link by default
                paths += [Path(current) / name for name in [*folders, *files]]
                if len(paths) > GIT_STAMP_LIMIT:
                    break
        for path in paths[:len(GIT_COMMIT_FILES) + GIT_STAMP_LIMIT]:
            with contextlib.suppress(OSError):
                self.stamps[path.relative_to(root).as_posix()] = stamp_of(os.lstat(path))


def project_venvs(root: Path, used: Path | None) -> list[Path]:
    """Every virtualenv inside the project (resolved), used or not (`used`: the toolchain's): each is kept
    read-only in writable runs, and its start-up files are checked after them."""
    real_root = Path(os.path.realpath(root))
    reals = [Path(os.path.realpath(path)) for path in (root / ".venv", root / "venv", *([used] if used is not None else []))]
    return list(dict.fromkeys(real for real in reals if (real / "pyvenv.cfg").is_file()
                              and real.is_relative_to(real_root) and real != real_root))


def site_dirs(root: Path, used_venv: Path | None) -> list[Path]:
    """The site-packages folders of the project's virtualenvs and of the one runs use (their start-up files are
    checked after each writable run)."""
    venvs = [*project_venvs(root, used_venv), *([used_venv] if used_venv is not None else [])]
    return sorted({Path(os.path.realpath(site)) for venv in venvs for site in (venv / "lib").glob("python3*/site-packages")})


def stamp_of(info: os.stat_result) -> FullStamp:
    return info.st_ino, info.st_mode, info.st_size, info.st_mtime_ns, info.st_ctime_ns


def shown(path: Path, root: Path) -> str:
    """A path as the stamps name it: relative inside the project, absolute outside."""
    real_root = os.path.realpath(root)
    return os.path.relpath(path, real_root) if str(path).startswith(real_root + os.sep) else str(path)


def user_globs(root: Path) -> tuple[str, ...]:
    """`[sandbox] protected = [...]` from `.agent/config.toml` (a broken config protects nothing more here)."""
    try:
        return Project.at(root).load_settings().protected_globs
    except ConfigError:
        return ()


def fixed_names(root: Path) -> list[str]:
    """The fixed protected names, the hooks folder when it lies in the work tree, and git's homes there."""
    hooks = hooks_path(root)
    extra = [hooks] if hooks and not hooks.startswith(".git/") and hooks not in PROTECTED_NAMES else []
    return [*PROTECTED_NAMES, *extra, *(home for home in git_homes(root) if home not in extra)]


def git_homes(root: Path) -> list[str]:
    """The project's git folder and common dir (config, hooks, refs, objects) where they lie in the work tree other
    than at `.git` (a `gitdir:` file or a link naming a folder of it, a `.git/commondir` naming one), relative: git
    obeys them as it obeys `.git`. A common dir at the root itself gives its config, hooks and the like."""
    real_root = os.path.realpath(root)
    dot_git = os.path.join(real_root, GIT)
    git_dir = os.path.realpath(_named_in(real_root, dot_git, "gitdir:") or dot_git)
    common = _named_in(git_dir, os.path.join(git_dir, "commondir"), "")
    homes: list[str] = []
    for folder in (git_dir, *([os.path.realpath(common)] if common else [])):
        if folder == real_root:
            homes += [name for name in GIT_READ_ONLY if name not in homes]
        elif (folder.startswith(real_root + os.sep) and folder != dot_git and not folder.startswith(dot_git + os.sep)
              and os.path.relpath(folder, real_root) not in homes):
            homes.append(os.path.relpath(folder, real_root))
    return homes


def _named_in(base: str, file: str, prefix: str) -> str | None:
    """The folder `file` names after `prefix` (relative to `base`), read as hostile input: a small regular file only,
    never through a link at its name nor blocking on a FIFO; None if it names none."""
    data = projectfs.read_regular(Path(file), 4096)
    text = data.decode("utf-8", "replace").strip() if data else ""
    named = text[len(prefix):].strip() if text.startswith(prefix) else ""
    return os.path.join(base, named) if named and "\0" not in named else None


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
    if git_commits:  # git's homes outside `.git` are left to the harvest, which refuses them whole
        names = [name for name in names if name not in git_homes(root)]
    if git_commits and os.path.isdir(os.path.join(root, GIT)) and not os.path.islink(os.path.join(root, GIT)):
        hooks = hooks_path(root)
        inside = [f"{GIT}/{name}" for name in GIT_READ_ONLY]
        inside += [hooks] if hooks and hooks.startswith(GIT + "/") and hooks not in inside else []
        index = names.index(GIT)
        names[index:index + 1] = inside
    return [arg for relative in names if _bindable(root, relative) for arg in
            ("--ro-bind", str(root / relative), str(root / relative))]


@dataclass(frozen=True)
class Guard:
    """The protected paths a run may neither create, replace nor delete: the fixed names and the hooks folder
    (`names`), the user's globs (outside `.git` and `.agent`; `matches`: what they match now), and where a protected
    symlink pointing nowhere yet lands (`landings`: creating that file would give the protected path its content), and
    the folders on the way to them and to the globs' literal folders (`ways`: `tools` for `tools/hooks`), and those of
    the ways that were no folder before the run (`standing`: a symlink's target, "" for a file: the person's own).

    `fixed` is what a run without an overlay could create or replace (`ignored.sweep` moves it after the run): protected
    paths that are absent (None) or symlinks (their target; a bind protects only what a link points to), landings."""

    fixed: dict[str, str | None]
    matches: frozenset[str] = frozenset()
    patterns: tuple[str, ...] = ()
    names: frozenset[str] = frozenset()
    landings: frozenset[str] = frozenset()
    ways: frozenset[str] = frozenset()
    standing: dict[str, str] = field(default_factory=dict)

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
        ways = _on_the_way([*names, *landings], patterns)
        standing = {way: os.readlink(root / way) if os.path.islink(root / way) else "" for way in ways
                    if os.path.islink(root / way) or os.path.lexists(root / way) and not os.path.isdir(root / way)}
        return cls({**dict.fromkeys(landings), **links, **dict.fromkeys(absent)}, matches, patterns, names,
                   frozenset(landings), ways, standing)

    def covers(self, relative: str, folder: bool) -> bool:
        if relative in self.names or relative in self.landings:
            return True
        if not folder and relative in self.ways:
            return True  # a file or link where a protected path needs a folder: a link there would redirect it
        return relative.split("/", 1)[0] not in (GIT, AGENT_DIR) and globs.matches(relative, self.patterns)

    def to_json(self) -> dict[str, object]:
        """The crash record of a run without an overlay (what `sweep` needs)."""
        return {"fixed": self.fixed, "globbed": sorted(self.matches), "patterns": list(self.patterns),
                "standing": self.standing}

    @classmethod
    def from_json(cls, data: object, root: Path) -> "Guard | None":
        """A record read back from `.agent/cache` (untrusted): only protected paths, only strings, the person's globs
        and the ways to them and to the protected names now (not the record's); None if malformed."""
        if not isinstance(data, dict):
            return None
        fixed, globbed, patterns = data.get("fixed"), data.get("globbed"), data.get("patterns")
        standing = data["standing"] if isinstance(data.get("standing"), dict) else {}
        if not (isinstance(fixed, dict) and isinstance(globbed, list) and isinstance(patterns, list)):
            return None
        paths, now = protected_paths(root), user_globs(root)
        clean = {name: link for name, link in fixed.items() if isinstance(name, str) and ".." not in Path(name).parts
                 and _entry_of(name, paths, now) is not None and (link is None or isinstance(link, str))}
        ways = _on_the_way(fixed_names(root), now)
        return cls(clean, frozenset(p for p in globbed if isinstance(p, str)), now, ways=ways,
                   standing={way: was for way, was in standing.items() if way in ways and isinstance(was, str)})


def _on_the_way(paths: list[str], patterns: tuple[str, ...]) -> frozenset[str]:
    """Every folder on the way to `paths` and to the literal leading folders of the anchored `patterns` (none
    leaving the project)."""
    folders = [path.split("/")[:-1] for path in paths]
    for pattern in map(globs.normalised, patterns):
        if "/" in pattern.rstrip("/") and not pattern.startswith("!") and ".." not in pattern.split("/"):
            parts = pattern.strip("/").split("/")[:-1]
            folders.append(parts[:next((n for n, part in enumerate(parts) if globs.GLOB_CHARS.search(part)), None)])
    return frozenset("/".join(parts[:depth]) for parts in folders for depth in range(1, len(parts) + 1))


def git_inner(relative: str) -> str | None:
    """The path inside the project's own `.git` (`""` for `.git` itself), or None outside it."""
    if relative == GIT:
        return ""
    return relative[len(GIT) + 1:] if relative.startswith(GIT + "/") else None


def nested_repository(relative: str, names: set[str] | frozenset[str] = frozenset()) -> bool:
    """A `.git` below the project root, or a folder holding `names` (those of REPOSITORY_MARKS it has) that git takes
    for a repository itself (setup.c's is_git_directory: a HEAD, with objects/ and refs/ or a `commondir` naming where
    they are; safe.bareRepository allows it by default): one whose config and hooks git would obey there."""
    return ((relative.rsplit("/", 1)[-1] == GIT and "/" in relative)
            or ("HEAD" in names and ("commondir" in names or {"objects", "refs"} <= names)))


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
