"""Applying an overlay run's upper folder to the project: exactly the run's writes and deletions, never over a change
someone else made to the same path during the run (that one is kept, the run's version set aside and named)."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from tui_agent.core import projectfs
from tui_agent.core.sandbox.lowerstate import LowerState

CHANGE_SLACK_NS = 20_000_000
"""Only for paths the run's start stamps do not cover (see lowerstate.py; a run recovered after a crash has none):
file times come from a coarse clock (one tick, a few ms, behind), so a change this soon before the run counts as
during it. That errs towards keeping a person's version and setting the run's aside, never the other way."""


@dataclass
class Harvest:
    """What applying one run's writes did. `paths`: project paths (relative, POSIX) the run created, changed or
    removed, now so in the project; `kept`: paths it also changed that someone else changed during the run
    (theirs kept); `notes`: one sentence per kept path or skipped entry, for the person and the model."""

    paths: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    aside: list[tuple[str, str]] = field(default_factory=list)
    """(path, where the run's version of it is, relative to the project) for each version set aside."""


def harvest(upper: Path, root: Path, *, since_ns: int, aside: Path, rootless: bool,
            start: LowerState | None = None) -> Harvest:
    """Apply `upper` (an unmounted overlay's upper folder) onto the project `root`. An entry of `root` that is not as
    `start` (the project's stamps as the run started) has it was changed by someone else (the run could not write
    `root`); one `start` does not cover, when its ctime is after `since_ns` (the run's start, CLOCK_REALTIME).
    A run's version that cannot be applied goes to `aside` (same relative path)."""
    applier = _Applier(root, since_ns - CHANGE_SLACK_NS, aside, "user." if rootless else "trusted.", start)
    applier.folder("", upper, opaque=False)
    applier.result.paths.sort()
    return applier.result


class _Applier:
    def __init__(self, root: Path, since_ns: int, aside: Path, xattr_prefix: str, start: LowerState | None) -> None:
        self.root = root
        self.start = start
        self.real_root = os.path.realpath(root)
        self.since_ns = since_ns
        self.aside = aside
        self.prefix = xattr_prefix
        self.result = Harvest()
        self.made: set[Path] = set()
        self.stamps: dict[Path, os.stat_result | None] = {}
        """Folders this harvest made (the run made them): their change times say nothing about anyone else."""

    def folder(self, relative: str, source: Path, *, opaque: bool) -> None:
        """Apply one upper folder; `opaque` (the run removed the folder and made it anew) removes what it lacks."""
        with os.scandir(source) as found:
            entries = sorted(found, key=lambda entry: entry.name)
        target_folder = self.root / relative if relative else self.root
        self.stamps[target_folder] = _lstat(target_folder)  # before this harvest changes it
        if opaque:
            names = {entry.name for entry in entries}
            try:
                existing = sorted(os.listdir(target_folder)) if _is_dir(target_folder) else []
            except OSError:
                existing = []
            for name in existing:
                if name not in names:
                    self.remove(_join(relative, name))
        for entry in entries:
            path = _join(relative, entry.name)
            info = entry.stat(follow_symlinks=False)
            if stat.S_ISCHR(info.st_mode) and info.st_rdev == 0:
                self.remove(path)
            elif stat.S_ISDIR(info.st_mode):
                if self.make_folder(path, Path(entry.path)):
                    self.folder(path, Path(entry.path), opaque=self.flag(Path(entry.path), "opaque"))
            elif stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode):
                self.file(path, Path(entry.path))
            else:
                self.result.notes.append(f"{path}: the run made a special file (fifo, socket or device); not applied")

    def file(self, relative: str, source: Path) -> None:
        target = self.root / relative
        if not self.inside(target.parent):
            self.set_aside(relative, source, "a folder on its way now leads out of the project")
            return
        now = _lstat(target)
        if now is not None and self.changed(relative, now):
            self.set_aside(relative, source, "changed by you or another program during the run, and by the run")
            return
        if now is None and self.deleted_meanwhile(relative, source, target):
            self.set_aside(relative, source, "deleted by you or another program during the run, and changed by it")
            return
        if now is not None and stat.S_ISDIR(now.st_mode):
            self.remove(relative)  # the run replaced the folder with a file
            if _lstat(target) is not None:
                self.set_aside(relative, source, "a folder there holds files changed during the run")
                return
        _strip_overlay_attributes(source, self.prefix)
        _move(source, target)
        self.result.paths.append(relative)

    def make_folder(self, relative: str, source: Path) -> bool:
        """The project folder for an upper folder exists (made if the run made it); False when it cannot be."""
        target = self.root / relative
        if not self.inside(target.parent):
            self.result.notes.append(f"{relative}/: a folder on its way now leads out of the project; not applied")
            return False
        now = _lstat(target)
        if now is not None and stat.S_ISDIR(now.st_mode):
            return True
        if now is None and self.deleted_meanwhile(relative, source, target):
            self.set_aside(relative, source, "deleted by you or another program during the run, and changed by it")
            return False
        if now is not None:
            if self.changed(relative, now):
                self.set_aside(relative, source, "changed by you or another program during the run, and by the run")
                return False
            target.unlink()  # the run replaced a file or symlink with a folder
            self.result.paths.append(relative)
        target.mkdir()
        self.made.add(target)
        return True

    def remove(self, relative: str) -> None:
        """The run deleted `relative`: delete it, except what someone changed during the run (kept, and said)."""
        target = self.root / relative
        now = _lstat(target)
        if now is None:
            return
        if not self.inside(target.parent):
            return
        if stat.S_ISDIR(now.st_mode):
            for name in sorted(os.listdir(target)):
                self.remove(_join(relative, name))
            try:
                target.rmdir()
            except OSError:
                pass  # something in it was kept
            return
        if self.changed(relative, now):
            self.result.kept.append(relative)
            self.result.notes.append(f"{relative}: the run deleted it, but you or another program changed it during "
                                     "the run; it is kept")
            return
        target.unlink()
        self.result.paths.append(relative)

    def set_aside(self, relative: str, source: Path, why: str) -> None:
        where = self.aside / relative
        projectfs.make_dirs(where.parent)  # a link on the way in .agent/cache/ is refused, never written through
        if _lstat(where) is not None and not _is_dir(where):
            where.unlink()
        if _is_dir(source) and not source.is_symlink():
            shutil.copytree(source, where, symlinks=True, dirs_exist_ok=True)
        else:
            _strip_overlay_attributes(source, self.prefix)
            _move(source, where)
        shown = os.path.relpath(where, self.root)
        self.result.kept.append(relative)
        self.result.aside.append((relative, shown))
        self.result.notes.append(f"{relative}: {why}; yours is kept, the run's version is in {shown}")

    def changed(self, relative: str, info: os.stat_result) -> bool:
        """Whether `relative` (now `info`) is not as it was when the run started."""
        if self.start is not None and self.start.knows(relative):
            return not self.start.matches(relative, info)
        return info.st_ctime_ns >= self.since_ns

    def deleted_meanwhile(self, relative: str, source: Path, target: Path) -> bool:
        """`relative`, gone now, was there when the run started (it changed that version: someone deleted it)."""
        if self.start is not None and self.start.knows(relative):
            return self.start.existed(relative)
        return self.flag(source, "origin") and self.parent_changed(target)

    def parent_changed(self, target: Path) -> bool:
        if target.parent in self.made:
            return False
        parent = self.stamps[target.parent] if target.parent in self.stamps else _lstat(target.parent)
        return parent is None or parent.st_mtime_ns >= self.since_ns or parent.st_ctime_ns >= self.since_ns

    def inside(self, folder: Path) -> bool:
        real = os.path.realpath(folder)
        return real == self.real_root or real.startswith(self.real_root.rstrip(os.sep) + os.sep)

    def flag(self, path: Path, name: str) -> bool:
        try:
            return bool(os.getxattr(path, f"{self.prefix}overlay.{name}", follow_symlinks=False))
        except OSError:
            return False


def _join(relative: str, name: str) -> str:
    return f"{relative}/{name}" if relative else name


def _lstat(path: Path) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except OSError:
        return None


def _is_dir(path: Path) -> bool:
    info = _lstat(path)
    return info is not None and stat.S_ISDIR(info.st_mode)


def _strip_overlay_attributes(path: Path, prefix: str) -> None:
    try:
        names = os.listxattr(path, follow_symlinks=False)
    except OSError:
        return
    for name in names:
        if name.startswith(f"{prefix}overlay."):
            with contextlib.suppress(OSError):
                os.removexattr(path, name, follow_symlinks=False)


def _move(source: Path, target: Path) -> None:
    """Put `source` at `target` in one step (a rename; across file systems a copy renamed into place)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.rename(source, target)
        return
    except OSError as error:
        if error.errno != errno.EXDEV:
            raise
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".run")
    os.close(handle)
    try:
        if source.is_symlink():
            os.unlink(temporary)
            os.symlink(os.readlink(source), temporary)
        else:
            shutil.copy2(source, temporary)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
