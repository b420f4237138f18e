"""What a run that could write the project changed among the files git ignores (a virtualenv, build output): neither
`git status` nor /undo shows them, so each change is told to the person and the model; a `.pth`, `sitecustomize.py`
or `usercustomize.py` created or changed anywhere an interpreter reads is flagged on its own (issue 23).
`before_run` stamps them (small ones' bytes kept for /undo) before a writable run, `after_run` compares after it."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from tui_agent.core.sandbox.launch import project_venvs
from tui_agent.core.versioning.plainfiles import ignored_entries

CACHE_NAMES = frozenset({"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis"})
"""Folders a test run rewrites every time: their changes are not reported."""
STARTUP_NAMES = frozenset({"sitecustomize.py", "usercustomize.py"})
WALK_LIMIT = 50_000
"""Files looked at per run at most; beyond it the report says the check was incomplete."""
LISTED = 20
KEEP_FILE_BYTES = 256 * 1024
KEEP_TOTAL_BYTES = 16 * 1024 * 1024
KEEP_FILES = 5_000
"""What `keep` reads before a run at most: files up to 256 KiB, 16 MiB and 5,000 files in all."""

Stamp = tuple[int, int, int]  # size, mtime_ns, ctime_ns (agent code can reset mtime, never ctime)


@dataclass
class IgnoredState:
    """The ignored files of a project (and the start-up files of the interpreters' site folders) at one moment."""

    files: dict[str, Stamp] = field(default_factory=dict)
    complete: bool = True
    kept: dict[str, bytes] = field(default_factory=dict)
    """The bytes of small project files before a run (`keep`), so that /undo can put back what the run changed."""
    roots: list[str] = field(default_factory=list)
    """The ignored entries of the project walked (files, or folders stamped but for caches): lowerstate.py skips them."""


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



def take(root: Path, site_dirs: list[Path]) -> IgnoredState:
    """Stamp every ignored file under `root` (caches left out) and every start-up file in `site_dirs`."""
    state = IgnoredState()
    for entry in outermost(ignored_entries(root)):
        if entry == ".agent" or entry.startswith(".agent/"):
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
        data = _read_regular(root / name)
        if data is not None:
            state.kept[name] = data
            budget -= len(data)


def _read_regular(path: Path) -> bytes | None:
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
    try:
        info = path.lstat()
    except OSError:
        return
    shown = os.path.relpath(path, root) if root in path.parents else str(path)
    state.files[shown] = (info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def report(before: IgnoredState, after: IgnoredState) -> list[str]:
    """One note per start-up file created or changed, then one note listing the other ignored files changed."""
    created = sorted(set(after.files) - set(before.files))
    changed = sorted(name for name in set(after.files) & set(before.files) if after.files[name] != before.files[name])
    removed = sorted(set(before.files) - set(after.files))
    notes: list[str] = []
    for name in (*created, *changed):
        if is_startup_file(Path(name).name):
            verb = "created" if name in created else "changed"
            notes.append(f"WARNING: the run {verb} {name}, a Python start-up file: every interpreter that reads its "
                         "folder runs it, outside the sandbox and with your environment. Delete it unless you meant it.")
    others = [f"{name} (created)" for name in created if not is_startup_file(Path(name).name)]
    others += [f"{name} (changed)" for name in changed if not is_startup_file(Path(name).name)]
    others += [f"{name} (removed)" for name in removed]
    if others:
        shown = ", ".join(others[:LISTED]) + (f" and {len(others) - LISTED} more" if len(others) > LISTED else "")
        notes.append(f"the run changed files git ignores (git status does not show them; /undo puts back what it "
                     f"can and lists the rest): {shown}")
    if not (before.complete and after.complete):
        notes.append(f"files git ignores were checked only in part (more than {WALK_LIMIT}): other changes may be "
                     "unreported")
    return notes


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
                                   "" if data is not None else _why_not_kept(name, old)))
    return found


def _why_not_kept(name: str, stamp: Stamp) -> str:
    if os.path.isabs(name):
        return "it is outside the project"
    if stamp[0] > KEEP_FILE_BYTES:
        return f"its content before the run was not kept (larger than {KEEP_FILE_BYTES // 1024} KiB)"
    return (f"its content before the run was not kept (not a regular file, unreadable, a read-only virtualenv, or past "
            f"the {KEEP_TOTAL_BYTES // (1024 * 1024)} MiB kept per run)")


def site_dirs(root: Path, used_venv: Path | None) -> list[Path]:
    """The site-packages folders of the project's virtualenvs and of the one runs use (their start-up files are
    checked after each writable run)."""
    venvs = [*project_venvs(root, used_venv), *([used_venv] if used_venv is not None else [])]
    return sorted({folder for venv in venvs for folder in (venv / "lib").glob("python3*/site-packages")})


def before_run(root: Path, used_venv: Path | None, *, venvs_read_only: bool) -> IgnoredState:
    """The ignored files before a writable run, small ones' bytes kept for /undo (not those of a virtualenv the run
    cannot write: `venvs_read_only`)."""
    state = take(root, site_dirs(root, used_venv))
    venvs = project_venvs(root, used_venv) if venvs_read_only else []
    inside = [os.path.relpath(venv, root) for venv in venvs]
    keep(root, state, [folder for folder in inside if not folder.startswith("..")])
    return state


def after_run(root: Path, used_venv: Path | None,
              start: IgnoredState) -> tuple[list[str], list[IgnoredChange]]:
    """(one note per change, for the person and the model; the changes, for the undo journal)."""
    now = take(root, site_dirs(root, used_venv))
    return report(start, now), changes(start, now)
