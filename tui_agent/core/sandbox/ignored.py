"""What a run that could write the project changed among the files git ignores (a virtualenv, build output): neither
`git status` nor /undo shows them, so each change is told to the person and the model; a `.pth`, `sitecustomize.py`
or `usercustomize.py` created or changed anywhere an interpreter reads is flagged on its own (issue 23).

`report` takes what a run wrote: through an overlay, what the harvest applied (with the bytes it replaced, read as it
replaced them); without one (the rlimits tier, a machine where the overlay cannot be mounted), what differs between
the project's stamps before and after the run (fallback.py), with the bytes `keep` read before it."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from tui_agent.core.project import AGENT_DIR
from tui_agent.core.sandbox.launch import project_venvs
from tui_agent.core.versioning.plainfiles import ignored_among

CACHE_NAMES = frozenset({"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis"})
"""Folders a test run rewrites every time: their changes are not reported."""
STARTUP_NAMES = frozenset({"sitecustomize.py", "usercustomize.py"})
WALK_LIMIT = 100_000
"""Entries of the project stamped before a run at most (writable_runs.LowerState); past it changes may go unreported."""
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
    try:
        info = path.lstat()
    except OSError:
        return None
    return info.st_size, info.st_mtime_ns, info.st_ctime_ns


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
