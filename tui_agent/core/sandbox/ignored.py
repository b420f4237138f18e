"""What a run that could write the project changed among the files git ignores (a virtualenv, build output): neither
`git status` nor /undo shows them, so each change is told to the person and the model; a `.pth`, `sitecustomize.py`
or `usercustomize.py` created or changed anywhere an interpreter reads is flagged on its own (issue 23).

A run through an overlay: `from_harvest` takes them from what the harvest applied (the bytes before, read as the harvest
replaced them). A writable run without an overlay (the rlimits tier, a machine where the overlay cannot be mounted)
writes the project directly: `before_run` stamps the ignored files (small ones' bytes kept for /undo), `after_run`
walks them again and compares."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from tui_agent.core.project import AGENT_DIR
from tui_agent.core.sandbox.venvs import project_venvs
from tui_agent.core.versioning.plainfiles import ignored_among, ignored_entries

CACHE_NAMES = frozenset({"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis"})
"""Folders a test run rewrites every time: their changes are not reported."""
STARTUP_NAMES = frozenset({"sitecustomize.py", "usercustomize.py"})
WALK_LIMIT = 50_000
"""Files looked at per run at most; beyond it the report says the check was incomplete."""
LISTED = 20
KEEP_FILE_BYTES = 256 * 1024
KEEP_TOTAL_BYTES = 16 * 1024 * 1024
KEEP_FILES = 5_000
"""What is read of the files a run changes at most (for /undo): files up to 256 KiB, 16 MiB and 5,000 files in all;
a start-up file's bytes always."""

Stamp = tuple[int, int, int]  # size, mtime_ns, ctime_ns (agent code can reset mtime, never ctime)


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
        said.append(f"files git ignores were checked only in part (more than {WALK_LIMIT}): other changes may be "
                    "unreported")
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


def from_harvest(root: Path, written: dict[str, str], before: dict[str, bytes | int],
                 used_venv: Path | None) -> tuple[list[str], list[IgnoredChange]]:
    """The ignored files among what a harvest applied (`written`: path -> created, changed or removed; `before`: the
    bytes it replaced, or their size when not kept), and a start-up file put in a project virtualenv's site folder
    (ignored or not): (the notes, the changes for the undo journal)."""
    candidates = sorted(path for path in written if reported(path))
    if not candidates:
        return [], []
    ignored = ignored_among(root, candidates)
    real_root = os.path.realpath(root)
    sites = {os.path.relpath(folder, real_root) for folder in site_dirs(root, used_venv)}
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
    return notes(found), found


def _stamp_of(path: Path) -> Stamp | None:
    try:
        info = path.lstat()
    except OSError:
        return None
    return info.st_size, info.st_mtime_ns, info.st_ctime_ns


@dataclass
class IgnoredState:
    """The ignored files of a project (and the start-up files of the interpreters' site folders) at one moment."""

    files: dict[str, Stamp] = field(default_factory=dict)
    complete: bool = True
    kept: dict[str, bytes] = field(default_factory=dict)
    """The bytes of small project files before a run (`keep`), so that /undo can put back what the run changed."""
    roots: list[str] = field(default_factory=list)
    """The ignored entries of the project walked (files, or folders stamped but for caches)."""


def take(root: Path, site_dirs: list[Path]) -> IgnoredState:
    """Stamp every ignored file under `root` (caches left out) and every start-up file in `site_dirs`."""
    state = IgnoredState()
    for entry in outermost(ignored_entries(root)):
        if entry == AGENT_DIR or entry.startswith(AGENT_DIR + "/"):
            continue  # tuiagent's own files (run log, caches), read-only to agent code in bubblewrap
        state.roots.append(entry)
        if not _walk(root / entry, root, state):
            break
    for folder in site_dirs:
        try:
            names = [name for name in os.listdir(folder) if is_startup_file(name)]
        except OSError:
            continue
        for name in names:
            _stamp(folder / name, root, state)
    return state


def outermost(entries: list[str]) -> list[str]:
    """The entries not inside another one: for a folder holding only ignored files git lists the folder and the
    ignored folders inside it too, which would each be walked again."""
    listed = set(entries)
    return [entry for entry in entries
            if not any("/".join(entry.split("/")[:depth]) in listed for depth in range(1, entry.count("/") + 1))]


def keep(root: Path, state: IgnoredState, skip: list[str]) -> None:
    """Read the bytes of the project's small ignored files into `state.kept` (start-up files first, then the smallest),
    within the KEEP_ limits; files under the folders of `skip` (ones the run cannot write) are left out."""
    prefixes = tuple(folder.rstrip("/") + "/" for folder in skip)
    candidates = sorted((not is_startup_file(Path(name).name), stamp[0], name) for name, stamp in state.files.items()
                        if not os.path.isabs(name) and stamp[0] <= KEEP_FILE_BYTES and not name.startswith(prefixes))
    budget = KEEP_TOTAL_BYTES
    for _, size, name in candidates[:KEEP_FILES]:
        if size > budget:
            break
        data = read_regular(root / name)
        if data is not None:
            state.kept[name] = data
            budget -= len(data)


def _walk(start: Path, root: Path, state: IgnoredState) -> bool:
    """Stamp the files under `start` (never following links); False once WALK_LIMIT is reached."""
    prefix = str(root) + os.sep
    if start.name in CACHE_NAMES:
        return True
    if not start.is_dir() or start.is_symlink():
        _stamp(start, root, state)
        return True
    stack = [str(start)]
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            if entry.name in CACHE_NAMES:
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                    continue
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            name = entry.path[len(prefix):] if entry.path.startswith(prefix) else entry.path
            state.files[name] = (info.st_size, info.st_mtime_ns, info.st_ctime_ns)
        if len(state.files) >= WALK_LIMIT:
            state.complete = False
            return False
    return True


def _stamp(path: Path, root: Path, state: IgnoredState) -> None:
    stamp = _stamp_of(path)
    if stamp is not None:
        state.files[os.path.relpath(path, root) if root in path.parents else str(path)] = stamp


def changes(before: IgnoredState, after: IgnoredState) -> list[IgnoredChange]:
    """Every ignored file the run created, changed or removed, with its bytes before the run when `keep` had them."""
    found: list[IgnoredChange] = []
    for name in sorted(set(before.files) | set(after.files)):
        old, new = before.files.get(name), after.files.get(name)
        if old == new:
            continue
        if old is None:
            found.append(IgnoredChange(name, "created", new))
            continue
        data = before.kept.get(name)
        found.append(IgnoredChange(name, "changed" if new is not None else "removed", new, data,
                                   "" if data is not None else not_kept(name, old[0])))
    return found


def site_dirs(root: Path, used_venv: Path | None) -> list[Path]:
    """The site-packages folders of the project's virtualenvs and of the one runs use (their start-up files are
    checked after each writable run)."""
    venvs = [*project_venvs(root, used_venv), *([used_venv] if used_venv is not None else [])]
    return sorted({folder for venv in venvs for folder in (venv / "lib").glob("python3*/site-packages")})


def before_run(root: Path, used_venv: Path | None, *, venvs_read_only: bool) -> IgnoredState:
    """The ignored files before a writable run without an overlay, small ones' bytes kept for /undo (not those of a
    virtualenv the run cannot write: `venvs_read_only`)."""
    state = take(root, site_dirs(root, used_venv))
    venvs = project_venvs(root, used_venv) if venvs_read_only else []
    inside = [os.path.relpath(venv, root) for venv in venvs]
    keep(root, state, [folder for folder in inside if not folder.startswith("..")])
    return state


def after_run(root: Path, used_venv: Path | None, start: IgnoredState) -> tuple[list[str], list[IgnoredChange]]:
    """(one note per change, for the person and the model; the changes, for the undo journal)."""
    now = take(root, site_dirs(root, used_venv))
    found = changes(start, now)
    return notes(found, start.complete and now.complete), found
