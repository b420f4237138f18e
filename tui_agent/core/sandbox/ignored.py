"""What a run that could write the project changed among the files git ignores (a virtualenv, build output): neither
`git status` nor /undo shows them, so each change is told to the person and the model; a `.pth`, `sitecustomize.py`
or `usercustomize.py` created or changed anywhere an interpreter reads is flagged on its own (issue 23)."""

from __future__ import annotations

import os
import site
from dataclasses import dataclass, field
from pathlib import Path

from tui_agent.core.versioning.plainfiles import ignored_entries

CACHE_NAMES = frozenset({"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis"})
"""Folders a test run rewrites every time: their changes are not reported."""
STARTUP_NAMES = frozenset({"sitecustomize.py", "usercustomize.py"})
WALK_LIMIT = 50_000
"""Files looked at per run at most; beyond it the report says the check was incomplete."""
LISTED = 20

Stamp = tuple[int, int, int]  # size, mtime_ns, ctime_ns (agent code can reset mtime, never ctime)


@dataclass
class IgnoredState:
    """The ignored files of a project (and the start-up files of the interpreters' site folders) at one moment."""

    files: dict[str, Stamp] = field(default_factory=dict)
    complete: bool = True


def is_startup_file(name: str) -> bool:
    return name.endswith(".pth") or name in STARTUP_NAMES




def site_folders(extra: list[Path]) -> list[Path]:
    """Folders every interpreter of the person reads start-up files from: the user site, and `extra` (a venv's)."""
    folders = [Path(site.getusersitepackages()), *extra]
    return [folder for folder in folders if folder.is_dir()]


def take(root: Path, site_dirs: list[Path]) -> IgnoredState:
    """Stamp every ignored file under `root` (caches left out) and every start-up file in `site_dirs`."""
    state = IgnoredState()
    for entry in ignored_entries(root):
        if entry == ".agent" or entry.startswith(".agent/"):
            continue  # tuiagent's own files (run log, caches), read-only to agent code in bubblewrap
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
        notes.append(f"the run changed files git ignores (git status does not show them, /undo does not restore "
                     f"them): {shown}")
    if not (before.complete and after.complete):
        notes.append(f"files git ignores were checked only in part (more than {WALK_LIMIT}): other changes may be "
                     "unreported")
    return notes
