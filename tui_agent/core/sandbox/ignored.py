"""What a writable run changed beyond what the harvest applies: the project's stamps before it (`LowerState`), and the
changes among the files git ignores (a virtualenv, build output): neither `git status` nor /undo shows them, so each
change is told to the person and the model; a `.pth`, `sitecustomize.py` or `usercustomize.py` created or changed
anywhere an interpreter reads is flagged on its own (issue 23).

`report` takes what a run wrote: through an overlay, what the harvest applied (with the bytes it replaced, read as it
replaced them); without one (the rlimits tier, a machine where the overlay cannot be mounted), what differs between
the project's stamps before and after the run (`compare`), with the bytes `keep` read before it. Such a run is also
swept (`sweep`): each protected path it created or replaced is moved to `.agent/quarantine/`."""

from __future__ import annotations

import contextlib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from tui_agent.core import globs
from tui_agent.core.project import AGENT_DIR
from tui_agent.core.sandbox.launch import project_venvs
from tui_agent.core.sandbox.protected import GIT, GIT_COMMIT_FILES, GLOB_WATCH_LIMIT, Guard, moved_note, new_folder
from tui_agent.core.versioning.plainfiles import ignored_among

CACHE_NAMES = frozenset({"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis"})
"""Folders a test run rewrites every time: their changes are not reported."""
STARTUP_NAMES = frozenset({"sitecustomize.py", "usercustomize.py"})
WALK_LIMIT = 100_000
"""Entries of the project stamped before a run at most; past it, paths not stamped are judged by their change time
(harvest.py), and changes among ignored files may go unreported."""
SKIPPED = frozenset({GIT, AGENT_DIR})
"""Top-level folders not walked (git's objects, tuiagent's own files): judged by their change time, but for what a
commit writes in `.git` (index, HEAD, refs, logs: up to GIT_STAMP_LIMIT entries)."""
GIT_STAMP_LIMIT = 10_000
LISTED = 20
KEEP_FILE_BYTES = 256 * 1024
KEEP_TOTAL_BYTES = 16 * 1024 * 1024
KEEP_FILES = 5_000
"""What is read of the files a run changes at most (for /undo): files up to 256 KiB, 16 MiB and 5,000 files in all;
a start-up file's bytes always."""

Stamp = tuple[int, int, int]  # size, mtime_ns, ctime_ns (agent code can reset mtime, never ctime)
FullStamp = tuple[int, int, int, int, int]
"""st_ino, st_mode, st_size, st_mtime_ns, st_ctime_ns (its last three: a `Stamp`)."""


@dataclass(frozen=True)
class IgnoredChange:
    """One ignored file a run created, changed or removed; `before` holds its bytes before the run when they were kept,
    else `not_kept` says why; `after` is its stamp after the run (None: removed), to tell a later change apart."""

    path: str
    change: str
    after: Stamp | None
    before: bytes | None = None
    not_kept: str = ""


def is_startup_file(name: str) -> bool:
    return name.endswith(".pth") or name in STARTUP_NAMES


@dataclass
class LowerState:
    """The project as a writable run starts (an overlay run's lower layer is the live project): `stamps`, project path
    (relative, POSIX; "" the project itself; absolute outside it) -> its stamp then, so a change someone made during
    the run is told from one made before it by comparing, not by file times; `complete` when every entry outside
    SKIPPED was stamped."""

    stamps: dict[str, FullStamp] = field(default_factory=dict)
    complete: bool = True

    def knows(self, relative: str) -> bool:
        """Whether `relative`'s state at the start is known (stamped, or surely absent then)."""
        return relative in self.stamps or (self.complete and relative.split("/", 1)[0] not in SKIPPED)

    def matches(self, relative: str, info: os.stat_result) -> bool:
        """Whether `relative`, now `info`, is as it was at the start (False: it was not there)."""
        return self.stamps.get(relative) == stamp_of(info)

    @classmethod
    def take(cls, root: Path, limit: int = WALK_LIMIT, sites: list[Path] | None = None) -> "LowerState":
        """Stamp every entry under `root` (never following links) up to `limit` entries, then what commits write, then
        the start-up files of the `sites` folders (`site_dirs`: those outside the project too)."""
        state = cls()
        pending = [("", str(root))]
        while pending and state.complete:
            relative, folder = pending.pop()
            try:
                with os.scandir(folder) as found:
                    entries = [entry for entry in found if relative or entry.name not in SKIPPED]
                state.stamps[relative] = stamp_of(os.lstat(folder))
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
                        state.stamps[path] = stamp_of(entry.stat(follow_symlinks=False))
        state.stamp_git(root)
        for site in sites or []:
            with contextlib.suppress(OSError):
                for name in [name for name in os.listdir(site) if is_startup_file(name)]:
                    with contextlib.suppress(OSError):
                        state.stamps[shown(site / name, root)] = stamp_of(os.lstat(site / name))
        return state

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


def stamp_of(info: os.stat_result) -> FullStamp:
    return info.st_ino, info.st_mode, info.st_size, info.st_mtime_ns, info.st_ctime_ns


def compare(root: Path, venv: Path | None, start: LowerState,
            kept: dict[str, bytes]) -> tuple[list[str], list[IgnoredChange], list[str]]:
    """What a run without an overlay changed among the ignored files, from the stamps `start` taken before it (with
    `site_dirs`) and `kept`, the bytes read then: (the notes, the changes kept for undo, every path it created, folders
    too)."""
    now = LowerState.take(root, sites=site_dirs(root, venv))
    both = {**start.stamps, **now.stamps}
    written = {path: "removed" if path not in now.stamps else "created" if path not in start.stamps else "changed"
               for path, stamp in both.items()
               if start.stamps.get(path) != now.stamps.get(path) and not stat.S_ISDIR(stamp[1])}
    before: dict[str, bytes | int] = {path: kept.get(path, start.stamps[path][2]) for path in written
                                      if path in start.stamps}
    said, found = report(root, written, before, venv, start.complete and now.complete)
    return said, found, [path for path in now.stamps if path not in start.stamps]


def sweep(root: Path, before: Guard, *, since_ns: int | None = None) -> list[str]:
    """Move every protected path a run without an overlay created or replaced into one new
    `.agent/quarantine/<time>-<id>/` folder (a replaced symlink is put back); one note per path, saying exactly what
    was moved where.

    `since_ns` (a record read back after a crash, so untrusted): only paths changed since then move, and no symlink
    is recreated (the note says what it pointed to)."""
    moves: list[tuple[str, str, str | None]] = []
    for relative, link in before.fixed.items():
        path = root / relative
        now = os.readlink(path) if path.is_symlink() else ("" if os.path.lexists(path) else None)
        if now != link and (since_ns is None or (now is not None and _changed_since(path, since_ns))):
            moves.append((relative, "created" if link is None else "replaced", link))
    found: list[str] = []
    for relative in globs.matching_paths(root, before.patterns, limit=GLOB_WATCH_LIMIT):  # sorted: a folder before its files
        if (relative in before.matches or relative.split("/")[0] in (GIT, AGENT_DIR)
                or any(relative.startswith(parent + "/") for parent in found)):
            continue  # known before, git's or tuiagent's own, or inside a new folder moved whole
        found.append(relative)
        if since_ns is None or _changed_since(root / relative, since_ns):
            moves.append((relative, "created", None))
    folder: Path | None = None
    notes: list[str] = []
    for relative, verb, link in moves:
        path = root / relative
        try:
            folder = folder or new_folder(root)
            target = folder / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            if os.path.lexists(path):
                os.rename(path, target)  # the same file system: the path itself moves, never what a link points to
            if link is not None and since_ns is None:
                os.symlink(link, path)
            notes.append(moved_note(verb, relative, str(target.relative_to(root)), link, restored=since_ns is None))
        except OSError as error:
            notes.append(f"agent code {verb} the protected path {relative} and it could not be moved away "
                         f"({error}); check it before you use it")
    return notes


def _changed_since(path: Path, since_ns: int) -> bool:
    try:
        return path.lstat().st_ctime_ns >= since_ns
    except OSError:
        return False


def notes(found: list[IgnoredChange], complete: bool = True) -> list[str]:
    """One note per start-up file created or changed, then one note listing the other ignored files changed."""
    paths = {kind: [change.path for change in found if change.change == kind] for kind in ("created", "changed", "removed")}
    said: list[str] = []
    for verb in ("created", "changed"):
        said += [f"WARNING: the run {verb} {name}, a Python start-up file: every interpreter that reads its folder runs "
                 "it, outside the sandbox and with your environment. Delete it unless you meant it."
                 for name in paths[verb] if is_startup_file(Path(name).name)]
    others = [f"{name} ({kind})" for kind, names in paths.items() for name in names
              if kind == "removed" or not is_startup_file(Path(name).name)]
    if others:
        shown = ", ".join(others[:LISTED]) + (f" and {len(others) - LISTED} more" if len(others) > LISTED else "")
        said.append(f"the run changed files git ignores (git status does not show them; /undo puts back what it "
                    f"can and lists the rest): {shown}")
    if not complete:
        said.append(f"files git ignores were checked only in part (more than {WALK_LIMIT} entries): other changes may "
                    "be unreported")
    return said


def read_regular(path: Path) -> bytes | None:
    """The bytes of a regular file (never through a symlink, never blocking on a FIFO), None past KEEP_FILE_BYTES."""
    try:
        handle = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(handle).st_mode):
            return None
        chunks: list[bytes] = []
        total = 0
        while chunk := os.read(handle, 65536):
            chunks.append(chunk)
            total += len(chunk)
            if total > KEEP_FILE_BYTES:
                return None
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(handle)


def not_kept(name: str, size: int) -> str:
    if os.path.isabs(name):
        return "it is outside the project"
    if size > KEEP_FILE_BYTES:
        return f"its content before the run was not kept (larger than {KEEP_FILE_BYTES // 1024} KiB)"
    return (f"its content before the run was not kept (not a regular file, unreadable, a read-only virtualenv, or past "
            f"the {KEEP_TOTAL_BYTES // (1024 * 1024)} MiB kept per run)")


def reported(relative: str) -> bool:
    """Not tuiagent's own files, not a cache a test run rewrites every time."""
    parts = relative.split("/")
    return parts[0] != AGENT_DIR and not CACHE_NAMES.intersection(parts)


def report(root: Path, written: dict[str, str], before: dict[str, bytes | int], used_venv: Path | None,
           complete: bool = True) -> tuple[list[str], list[IgnoredChange]]:
    """The ignored files among what a run wrote (`written`: path -> created, changed or removed; `before`: the bytes
    it replaced, or their size when not kept), and the start-up files in a site folder (`site_dirs`, ignored or not):
    (the notes, the changes for the undo journal)."""
    candidates = sorted(path for path in written if reported(path))
    if not candidates:
        return notes([], complete), []
    ignored = ignored_among(root, [path for path in candidates if not os.path.isabs(path)])
    sites = {shown(folder, root) for folder in site_dirs(root, used_venv)}
    found: list[IgnoredChange] = []
    for path in candidates:
        if path not in ignored and not (is_startup_file(Path(path).name) and os.path.dirname(path) in sites):
            continue
        change, kept = written[path], before.get(path)
        after = _stamp_of(root / path) if change != "removed" else None
        if change == "created" or isinstance(kept, bytes):
            found.append(IgnoredChange(path, change, after, kept if isinstance(kept, bytes) else None))
        else:
            found.append(IgnoredChange(path, change, after, None, not_kept(path, kept or 0)))
    return notes(found, complete), found


def _stamp_of(path: Path) -> Stamp | None:
    with contextlib.suppress(OSError):
        return stamp_of(path.lstat())[2:]
    return None


def shown(path: Path, root: Path) -> str:
    """A path as the stamps name it: relative inside the project, absolute outside."""
    real_root = os.path.realpath(root)
    return os.path.relpath(path, real_root) if str(path).startswith(real_root + os.sep) else str(path)


def site_dirs(root: Path, used_venv: Path | None) -> list[Path]:
    """The site-packages folders of the project's virtualenvs and of the one runs use (their start-up files are
    checked after each writable run)."""
    venvs = [*project_venvs(root, used_venv), *([used_venv] if used_venv is not None else [])]
    return sorted({Path(os.path.realpath(site)) for venv in venvs for site in (venv / "lib").glob("python3*/site-packages")})


def keep(root: Path, sizes: dict[str, int], skip: list[str]) -> dict[str, bytes]:
    """The bytes of the small files among `sizes` (project path -> size; start-up files first, then the smallest)
    within the KEEP_ limits, read before a run without an overlay; none under the folders of `skip` (ones the run
    cannot write)."""
    prefixes = tuple(folder.rstrip("/") + "/" for folder in skip)
    candidates = sorted((not is_startup_file(Path(name).name), size, name) for name, size in sizes.items()
                        if not os.path.isabs(name) and size <= KEEP_FILE_BYTES and not name.startswith(prefixes))
    kept: dict[str, bytes] = {}
    budget = KEEP_TOTAL_BYTES
    for _, size, name in candidates[:KEEP_FILES]:
        if size > budget:
            break
        data = read_regular(root / name)
        if data is not None:
            kept[name] = data
            budget -= len(data)
    return kept
