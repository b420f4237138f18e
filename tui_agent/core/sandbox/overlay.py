"""Overlay mounts for writable bubblewrap runs: the project is mounted as an overlay whose upper folder lies outside it,
so what a run wrote is exactly what its upper folder holds; see `sandbox status`. Its folders are made before the run
(`prepare`), the project stamped as it starts (`LowerState`), recorded in `.agent/cache/overlays/` while it runs
(`begin`, `finish`: what a run wrote before tuiagent died is applied at the next sandbox start by `recover`), and
applied after it by the one filtered step (`apply`, harvest.py: protected paths and what a run may not leave are
refused and quarantined there, never swept afterwards)."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from tui_agent.core import projectfs
from tui_agent.core.catalog.files import process_alive
from tui_agent.core.sandbox.harvest import Harvest, harvest
from tui_agent.core.sandbox.protected import GIT, GIT_COMMIT_FILES
from tui_agent.core.tempfolders import AWAITING_RECOVERY

MOUNT_FAILED = 125
"""The launcher's exit status when the overlay could not be mounted (the worker never started; `launch.py` mounts it)."""

_UNSAFE = (",", ":", "\\", "\n", '"')
"""Characters the mount options cannot carry unescaped: such paths get no overlay (per-call attribution only)."""
RECORDS = "overlays"
Stamp = tuple[int, int, int, int, int]
"""st_ino, st_mode, st_size, st_mtime_ns, st_ctime_ns: agent code or a person can reset mtime, never ctime."""
WALK_LIMIT = 100_000
"""Entries stamped at most; past it, paths not stamped are judged by their change time (see harvest.py)."""
SKIPPED = frozenset({GIT, ".agent"})
"""Top-level folders not walked (git's objects, tuiagent's own files): judged by their change time, but for what a
commit writes in `.git` (index, HEAD, refs, logs: up to GIT_STAMP_LIMIT entries)."""
GIT_STAMP_LIMIT = 10_000


@dataclass(frozen=True)
class OverlayDirs:
    """One worker's overlay folders: `upper` receives everything the run writes; `work` is the kernel's."""

    folder: Path
    rootless: bool

    @property
    def upper(self) -> Path:
        return self.folder / "upper"

    @property
    def work(self) -> Path:
        return self.folder / "work"

    def remove(self) -> None:
        """Delete the folders (the kernel's work folder may be mode 000 for a user without privileges)."""
        for inner in (self.work / "work", self.work / "index"):
            with contextlib.suppress(OSError):
                os.chmod(inner, 0o700)
        shutil.rmtree(self.folder, ignore_errors=True)


@dataclass
class LowerState:
    """The project as an overlay run starts (its lower layer is the live project): `stamps`, project path (relative,
    POSIX; "" the project itself) -> its stamp then, so the harvest tells a change someone made during the run from
    one made before it by comparing, not by file times; `complete` when every entry outside SKIPPED was stamped."""

    stamps: dict[str, Stamp] = field(default_factory=dict)
    complete: bool = True

    def knows(self, relative: str) -> bool:
        """Whether `relative`'s state at the start is known (stamped, or surely absent then)."""
        return relative in self.stamps or (self.complete and relative.split("/", 1)[0] not in SKIPPED)

    def existed(self, relative: str) -> bool:
        return relative in self.stamps

    def matches(self, relative: str, info: os.stat_result) -> bool:
        """Whether `relative`, now `info`, is as it was at the start (False: it was not there)."""
        return self.stamps.get(relative) == _stamp(info)

    @classmethod
    def take(cls, root: Path, limit: int = WALK_LIMIT) -> "LowerState":
        """Stamp every entry under `root` (never following links) up to `limit` entries, then what commits write."""
        state = cls()
        pending = [("", str(root))]
        while pending and state.complete:
            relative, folder = pending.pop()
            try:
                with os.scandir(folder) as found:
                    entries = [entry for entry in found if relative or entry.name not in SKIPPED]
                state.stamps[relative] = _stamp(os.lstat(folder))
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
                        state.stamps[path] = _stamp(entry.stat(follow_symlinks=False))
        state.stamp_git(root)
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
                self.stamps[path.relative_to(root).as_posix()] = _stamp(os.lstat(path))


def _stamp(info: os.stat_result) -> Stamp:
    return info.st_ino, info.st_mode, info.st_size, info.st_mtime_ns, info.st_ctime_ns


def rootless() -> bool:
    return os.geteuid() != 0


def prepare(scratch: Path) -> OverlayDirs:
    """Fresh upper and work folders under `scratch` (outside the project, as the kernel requires)."""
    folder = Path(tempfile.mkdtemp(prefix="overlay-", dir=scratch))
    dirs = OverlayDirs(folder, rootless())
    dirs.upper.mkdir()
    dirs.work.mkdir()
    return dirs


def usable_paths(project: Path, scratch: Path) -> bool:
    return not any(mark in str(path) for path in (project, scratch) for mark in _UNSAFE)


def apply(dirs: OverlayDirs, root: Path, cache_dir: Path, since_ns: int, start: LowerState | None = None) -> Harvest:
    """Apply the run's upper folder onto the project (the overlay is unmounted: its processes are gone); the caller
    deletes the overlay's folders. `start`: the project's stamps as the run started (None after a crash).
    A run's version that cannot be applied goes to `.agent/cache/run-versions/<run>/`."""
    aside = cache_dir / "run-versions" / f"{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}"
    return harvest(dirs.upper, root, since_ns=since_ns, aside=aside, rootless=dirs.rootless, start=start)


def record_of(cache_dir: Path, dirs: OverlayDirs) -> Path:
    return cache_dir / RECORDS / f"{os.getpid()}-{dirs.folder.name}.json"


def begin(cache_dir: Path, dirs: OverlayDirs) -> str | None:
    """Record an overlay as its worker starts (ahead of its run: nothing on the run's path). Its time is the record's
    own, earlier than the run: recovery then errs towards keeping what changed meanwhile. Unwritable: no record, and
    why (a crash during that run would leave its writes unapplied) is returned."""
    record = record_of(cache_dir, dirs)
    try:
        data = json.dumps({"folder": str(dirs.folder), "rootless": dirs.rootless}).encode("utf-8")
        projectfs.write_atomic(record, data, sync=False)  # no link followed in .agent/cache/
        (dirs.folder / AWAITING_RECOVERY).write_text(str(record), encoding="utf-8")  # other processes' sweeps keep it
    except OSError as error:
        return f"{error.strerror or error} ({record.parent})"
    return None


def finish(cache_dir: Path, dirs: OverlayDirs) -> None:
    """The overlay's run was applied (or never ran): forget it and delete its folders."""
    try:
        record_of(cache_dir, dirs).unlink(missing_ok=True)
    except OSError:
        pass  # a read-only project has no record to forget (`begin` could not write one)
    dirs.remove()


def dead_records(folder: Path) -> list[Path]:
    """The records in `folder` (`<pid>-<id>.json`) of tuiagent processes that are gone (a crash, a kill)."""
    if not folder.is_dir() or folder.is_symlink():
        return []
    return [record for record in sorted(folder.glob("*.json"))
            if not ((pid := record.name.split("-")[0]).isdigit() and process_alive(int(pid)))]


def recover(root: Path, cache_dir: Path) -> list[str]:
    """Apply the upper folders of runs whose tuiagent process died during them; one note per path it applied or kept.

    The record is hostile input (a file in the project): only an overlay folder this user made under the temporary
    folder is read, and only with the harvest's own rules."""
    notes: list[str] = []
    for record in dead_records(cache_dir / RECORDS):
        found = _read(record)
        if found is not None:
            dirs, since = found
            try:
                harvest = apply(dirs, root, cache_dir, since)
            except OSError as error:  # a read-only project: its writes stay where they are, for a later start
                notes.append(f"what a run interrupted earlier wrote is in {dirs.upper}; it could not be applied "
                             f"to the project: {error.strerror or error}")
                continue
            notes += [f"{path}: written by a run interrupted earlier; applied" for path in harvest.paths]
            notes += [f"{note} (a run interrupted earlier)" for note in harvest.notes]
            dirs.remove()
        with contextlib.suppress(OSError):  # a read-only project: the record stays; its folder is gone, the next start drops it
            record.unlink(missing_ok=True)
    return notes


def _read(record: Path) -> tuple[OverlayDirs, int] | None:
    try:
        raw = json.loads(projectfs.read_text(record))
        folder, rootless, since = Path(raw["folder"]), raw["rootless"], record.stat().st_mtime_ns
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not isinstance(rootless, bool):
        return None
    temp = Path(os.path.realpath(tempfile.gettempdir()))
    real = Path(os.path.realpath(folder))
    if (real != folder or real.parent.parent != temp or not real.parent.name.startswith("tuiagent-sandbox-")
            or not real.name.startswith("overlay-")):
        return None
    try:
        if real.stat().st_uid != os.geteuid() or not (real / "upper").is_dir():
            return None
    except OSError:
        return None
    return OverlayDirs(real, rootless), since
