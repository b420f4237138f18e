"""The path of writable runs without an overlay: the weak tier and machines where the overlay cannot be mounted.

Such a run writes the project directly, so `fence` records the protected paths it could create and stamps the project
(the overlay path's `LowerState` walk) before it, and `unfence` sweeps and compares after it (after a crash too: the
record stays in `.agent/cache/sweeps/` and `recover_sweeps` sweeps for it at the next start); an overlay run whose
mount failed, run again without one, is checked against the stamps of its start (`after_mount_failed`). `WritableRuns`
keeps such a run's writes for undo unattributed (`policy.RunWrites`), with its ignored files' changes."""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tui_agent.core.project import AGENT_DIR
from tui_agent.core.sandbox import ignored
from tui_agent.core.sandbox.launch import project_venvs
from tui_agent.core.sandbox.protected import (GIT, Guard, glob_matches, matches_protected, moved_note, new_folder,
                                              user_globs)
from tui_agent.core.sandbox.writable_runs import LowerState, dead_records, forget, record_path, stamp_of, write_record
from tui_agent.core.versioning.plainfiles import ignored_among

SWEEPS = "sweeps"
GLOB_WATCH_LIMIT = 20_000
"""Matches of the user's globs recorded before a run; past this many, new matches beyond it are not told apart."""


@dataclass(frozen=True)
class Watch:
    """What a writable run without an overlay could create or replace: protected paths that are absent (None) or
    symlinks (their target; a bind protects only what a link points to), and the matches of the user's globs."""

    fixed: dict[str, str | None]
    globbed: frozenset[str]
    patterns: tuple[str, ...]

    def to_json(self) -> dict[str, object]:
        return {"fixed": self.fixed, "globbed": sorted(self.globbed), "patterns": list(self.patterns)}

    @classmethod
    def from_json(cls, data: object, known: Callable[[str], bool]) -> "Watch | None":
        """A record read back from `.agent/cache` (untrusted): only `known` paths, only strings; None if malformed."""
        if not isinstance(data, dict):
            return None
        fixed, globbed, patterns = data.get("fixed"), data.get("globbed"), data.get("patterns")
        if not (isinstance(fixed, dict) and isinstance(globbed, list) and isinstance(patterns, list)):
            return None
        clean = {name: link for name, link in fixed.items()
                 if isinstance(name, str) and known(name) and (link is None or isinstance(link, str))}
        return cls(clean, frozenset(p for p in globbed if isinstance(p, str)),
                   tuple(p for p in patterns if isinstance(p, str)))


@dataclass(frozen=True)
class Fence:
    """A writable run without an overlay, as it starts: its watch and the watch's crash record; when it may write the
    project, the stamps (`stamps`) and the bytes of its small ignored files."""

    watch: Watch
    record: Path | None
    start: LowerState | None
    kept: dict[str, bytes]


def fence(root: Path, cache_dir: Path, *, writes_project: bool, venv: Path | None, skip_venvs: bool) -> Fence:
    """Before a writable run without an overlay: the protected paths it could create (recorded for a crash) and,
    when it may write the project, the project's stamps and its small ignored files' bytes (not those of the
    virtualenvs it cannot write: `skip_venvs`)."""
    watched, start, kept = watch(root), None, {}
    if writes_project:
        start = stamps(root, venv)
        files = {path: stamp[2] for path, stamp in start.stamps.items() if not stat.S_ISDIR(stamp[1])}
        ignored_now = ignored_among(root, [path for path in files if not os.path.isabs(path)])
        skip = [os.path.relpath(folder, root) for folder in project_venvs(root, venv)] if skip_venvs else []
        kept = ignored.keep(root, {path: files[path] for path in ignored_now if path in files}, skip)
    record = None  # unwritable: a crash during the run skips its sweep
    with contextlib.suppress(OSError):
        record = write_record(record_path(cache_dir / SWEEPS, secrets.token_hex(4)), watched.to_json())
    return Fence(watched, record, start, kept)


def unfence(root: Path, fenced: Fence, venv: Path | None) -> tuple[list[str], list[ignored.IgnoredChange]]:
    """After a writable run without an overlay: what it created at protected paths moved to the quarantine; (the
    notes, its ignored files' changes for undo)."""
    notes = sweep(root, fenced.watch)
    forget(fenced.record)
    if fenced.start is None:
        return notes, []
    said, changes, _created = compare(root, venv, fenced.start, fenced.kept)
    return notes + said, changes


def after_mount_failed(root: Path, lower: LowerState,
                       venv: Path | None) -> tuple[list[str], list[ignored.IgnoredChange]]:
    """An overlay run whose mount failed ran again without one (dispatch.py), unfenced: what it changed is what
    differs from the project's stamps at its start; new protected paths are swept, ignored files reported."""
    said, changes, created = compare(root, venv, lower, {})
    guard, moved = Guard.of(root), list[str]()
    for path in sorted(created):
        if guard.covers(path, False) and not any(path.startswith(parent + "/") for parent in moved):
            moved.append(path)
    return [*sweep(root, Watch(dict.fromkeys(moved), frozenset(), ())), *said], changes


def stamps(root: Path, venv: Path | None) -> LowerState:
    """The project's stamps and those of the site folders' start-up files (`ignored.site_dirs`)."""
    state = LowerState.take(root)
    for folder in ignored.site_dirs(root, venv):  # the one outside the project too: such a run may write there
        with contextlib.suppress(OSError):
            for name in [name for name in os.listdir(folder) if ignored.is_startup_file(name)]:
                with contextlib.suppress(OSError):
                    state.stamps[ignored.shown(folder / name, root)] = stamp_of(os.lstat(folder / name))
    return state


def compare(root: Path, venv: Path | None, start: LowerState,
            kept: dict[str, bytes]) -> tuple[list[str], list[ignored.IgnoredChange], list[str]]:
    """What a run without an overlay changed among the ignored files, from the stamps `start` taken before it and
    `kept`, the bytes read then: (the notes, the changes kept for undo, every path it created, folders too)."""
    now = stamps(root, venv)
    both = {**start.stamps, **now.stamps}
    written = {path: "removed" if path not in now.stamps else "created" if path not in start.stamps else "changed"
               for path, stamp in both.items()
               if start.stamps.get(path) != now.stamps.get(path) and not stat.S_ISDIR(stamp[1])}
    before: dict[str, bytes | int] = {path: kept.get(path, start.stamps[path][2]) for path in written
                                      if path in start.stamps}
    said, found = ignored.report(root, written, before, venv, start.complete and now.complete)
    return said, found, [path for path in now.stamps if path not in start.stamps]


def watch(root: Path) -> Watch:
    """The protected paths a run without an overlay could create or replace in `root` (where a dangling protected link
    lands too); a run through an overlay has them refused by its harvest instead."""
    guard = Guard.of(root, GLOB_WATCH_LIMIT)
    absent = [name for name in guard.names if not os.path.lexists(root / name)]
    return Watch({**dict.fromkeys(guard.landings), **guard.links, **dict.fromkeys(absent)}, guard.matches,
                 guard.patterns)


def sweep(root: Path, before: Watch, *, since_ns: int | None = None) -> list[str]:
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
    for relative in sorted(glob_matches(root, before.patterns, limit=GLOB_WATCH_LIMIT)) if before.patterns else []:
        if (relative in before.globbed or relative.split("/")[0] in (GIT, AGENT_DIR)
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


def recover_sweeps(root: Path, cache_dir: Path) -> list[str]:
    """Sweep for the records of runs without an overlay whose tuiagent process died before it could."""
    notes: list[str] = []
    for record, data, written in dead_records(cache_dir / SWEEPS):
        before = Watch.from_json(data, lambda name: _protected(root, name))
        if before is not None:
            current = Watch(before.fixed, before.globbed, user_globs(root))  # the person's globs, not the record's
            notes += [f"{note} (a run interrupted earlier)" for note in sweep(root, current, since_ns=written)]
        forget(record)  # a read-only project: swept again at the next start, moving nothing new
    return notes


def _protected(root: Path, relative: str) -> bool:
    return ".." not in Path(relative).parts and matches_protected(root, relative) is not None
