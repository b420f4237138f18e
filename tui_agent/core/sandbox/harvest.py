"""The one filtered step that applies an overlay run's upper folder to the project: exactly the run's writes and
deletions, never over a change someone else made to the same path during the run (theirs kept, the run's version set
aside and named), never what a run may not leave behind nor a protected path (protected.py: refused, said, and copied
to `.agent/quarantine/` when worth a look). What it replaces is read first: the bytes undo puts back (ignored.py)."""

from __future__ import annotations

import contextlib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from tui_agent.core import projectfs
from tui_agent.core.sandbox.ignored import KEEP_FILE_BYTES, KEEP_TOTAL_BYTES
from tui_agent.core.sandbox.launch import is_inside
from tui_agent.core.sandbox.leftovers import (HardLinks, Leftovers, copy_clean, inert, moved_note, new_folder,
                                              put_clean, setid_refusal)
from tui_agent.core.sandbox.protected import (CHANGE_SLACK_NS, GIT, OUTSIDE, REFUSED, REPOSITORY_MARKS, Guard,
                                              LowerState, git_inner, is_startup_file, special_kind)
from tui_agent.core.versioning.gitintake import SAME, GitIntake, git_writable


@dataclass
class Harvest:
    """What applying one run's writes did. `written`: project path (relative, POSIX) -> "created", "changed" or
    "removed" for each file the run created, changed or removed, now so in the project (git's own folder left out: undo
    does not take commits back); `before`: the bytes of each file it changed or removed, or their size when not kept;
    `kept`: paths it also changed that someone else changed during the run (theirs kept); `notes`: one sentence per
    kept, refused or altered path, for the person and the model."""

    written: dict[str, str] = field(default_factory=dict)
    before: dict[str, bytes | int] = field(default_factory=dict)
    kept: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    aside: list[tuple[str, str]] = field(default_factory=list)
    """(path, where the run's version of it is, relative to the project) for each version set aside."""

    @property
    def paths(self) -> list[str]:
        return sorted(self.written)


def harvest(upper: Path, root: Path, *, since_ns: int, aside: Path, rootless: bool,
            start: LowerState | None = None) -> Harvest:
    """Apply `upper` (an unmounted overlay's upper folder) onto the project `root`. An entry of `root` that is not as
    `start` (the project's stamps as the run started) has it was changed by someone else (the run could not write
    `root`); one `start` does not cover, when its ctime is after `since_ns` (the run's start, CLOCK_REALTIME).
    A run's version that cannot be applied goes to `aside` (same relative path)."""
    applier = _Applier(root, since_ns - CHANGE_SLACK_NS, aside, "user." if rootless else "trusted.", start,
                       HardLinks(upper))
    applier.folder("", upper, opaque=False)
    applier.result.notes += [f"{GIT}/{inner}: {REFUSED}{what}" for inner, what in applier.intake.told]
    return applier.result


class _Applier:
    def __init__(self, root: Path, since_ns: int, aside: Path, xattr_prefix: str, start: LowerState | None,
                 links: HardLinks) -> None:
        self.root = root
        self.start = start or LowerState(complete=False)  # after a crash: nothing known, change times judge
        self.real_root = Path(os.path.realpath(root))
        self.since_ns = since_ns
        self.aside = aside
        self.prefix = xattr_prefix
        self.result = Harvest()
        self.made: set[Path] = set()
        """Folders this harvest made (the run made them): their change times say nothing about anyone else."""
        self.stamps: dict[Path, os.stat_result | None] = {}
        self.links = links
        self.upper = links.upper
        self.quarantined: Path | None = None
        self.guard = Guard.of(root)
        self.leftovers = Leftovers(self.marks, lambda _folder: False, lambda _path, info: OUTSIDE if links.outside(info)
                                   else None, _is_dir(root / GIT))  # lstat: a symlink is no folder
        self.intake = GitIntake(root)
        self.budget = KEEP_TOTAL_BYTES

    def folder(self, relative: str, source: Path, *, opaque: bool, mode: int | None = None) -> None:
        """Apply one upper folder; `opaque` (the run removed the folder and made it anew) removes what it lacks
        (never in git's folder); `mode`: the folder's mode in the run, applied once its entries are."""
        with os.scandir(source) as found:
            entries = sorted(found, key=lambda entry: entry.name)
        target_folder = self.root / relative if relative else self.root
        self.stamps[target_folder] = _lstat(target_folder)  # before this harvest changes it
        if opaque and git_inner(relative) is None:
            names = {entry.name for entry in entries}
            try:
                existing = sorted(os.listdir(target_folder)) if _is_dir(target_folder) else []
            except OSError:
                existing = []
            for name in existing:
                if name not in names:
                    self.remove(_join(relative, name))
        for entry in entries:
            self.entry(_join(relative, entry.name), Path(entry.path), entry.stat(follow_symlinks=False))
        if mode is not None and relative and relative != GIT:
            self.folder_mode(relative, target_folder, mode)

    def entry(self, path: str, source: Path, info: os.stat_result) -> None:
        if stat.S_ISCHR(info.st_mode) and info.st_rdev == 0:
            self.deletion(path)
        elif self.refused(path, source, info):
            return
        elif stat.S_ISDIR(info.st_mode):
            if self.make_folder(path, source):
                self.folder(path, source, opaque=self.flag(source, "opaque"), mode=info.st_mode)
        else:
            widened = _widened(info.st_mode, self.root / path)
            setid, note = setid_refusal(path, info.st_mode, "applied")
            if setid or widened:
                os.chmod(source, stat.S_IMODE(info.st_mode) & ~setid & ~widened)
            self.result.notes += [note] if note else []
            self.file(path, source)

    def refused(self, path: str, source: Path, info: os.stat_result) -> bool:
        """Whether `path` is something a run may not leave in the project (leftovers.Leftovers, a protected path, what
        the intake refuses in `.git`): then said, and copied to the quarantine when there is something to look at."""
        inner = git_inner(path)
        if (special_kind(info.st_mode) is None and inner is None
                and self.guard.covers(path, stat.S_ISDIR(info.st_mode))):
            return self.protected(path, source)
        found = self.leftovers.refusal(path, info)
        if found is None and inner is not None and stat.S_ISREG(info.st_mode):
            why = self.intake.refusal(inner, source, self.root / path, self.guard.covers)
            if why == SAME:
                return True  # an object file the project has as it is: nothing to apply
            found = None if why is None else (why, not inner.startswith("objects/"))  # compressed objects: no copy
        return found is not None and self.refuse(path, found[0], source if found[1] else None)

    def marks(self, folder: str) -> set[str]:
        """Which of REPOSITORY_MARKS `folder` has as the run leaves it: the run's entries there but deletions, and the
        project's unless the run made the folder anew."""
        source = self.upper / folder if folder else self.upper
        anew = bool(folder) and self.flag(source, "opaque")  # the project's entries there are gone
        upper = {name: _lstat(source / name) for name in REPOSITORY_MARKS}
        return {name for name, run in upper.items() if (run is None and not anew and os.path.lexists(self.root / folder / name))
                or (run is not None and not (stat.S_ISCHR(run.st_mode) and run.st_rdev == 0))}

    def refuse(self, relative: str, why: str, source: Path | None) -> bool:
        kept = ""
        if source is not None:
            try:
                kept = f"; a copy to look at is in {self.quarantine(relative, source)}"
            except OSError as error:
                kept = f" (no copy kept: {error.strerror or error})"
        self.result.notes.append(f"{relative}: {REFUSED}{why}; not applied{kept}")
        return True

    def protected(self, relative: str, source: Path) -> bool:
        """A protected path the run created or replaced: not applied (a symlink there stays), a copy quarantined."""
        target = self.root / relative
        verb = "replaced" if os.path.lexists(target) else "created"
        try:
            where = self.quarantine(relative, source)
        except OSError as error:
            self.result.notes.append(f"agent code {verb} the protected path {relative}; not applied, and no copy was "
                                     f"kept ({error})")
            return True
        self.result.notes.append(moved_note(verb, relative, where, os.readlink(target) if target.is_symlink() else None))
        return True

    def quarantine(self, relative: str, source: Path) -> str:
        """Copy the run's `relative` into this harvest's `.agent/quarantine/` folder; where it is (for the note)."""
        if self.quarantined is None:
            self.quarantined = new_folder(self.root)
        return str(put_clean(source, self.quarantined, relative, self.links).relative_to(self.root))

    def deletion(self, relative: str) -> None:
        """The run deleted `relative`; in git's folder only what commits change (a loose object packed away stays)."""
        inner = git_inner(relative)
        if inner is None and self.guard.covers(relative, folder=True):
            self.result.notes.append(f"agent code deleted the protected path {relative}; it is kept as it was")
        elif inner is None:
            self.remove(relative)
        elif inner == "" or not git_writable(inner):
            self.result.notes.append(f"{relative}: {REFUSED}the run deleted it, and a run may change only what commits "
                                     "need in .git; kept")
        elif not inner.startswith("objects/") and inner not in self.intake.held:  # held: its packed line refused
            self.remove(relative)

    def folder_mode(self, relative: str, target: Path, mode: int) -> None:
        """Give a folder the run made or changed the mode the run left it with (setuid never; setgid only where
        the folder or its parent has it: new folders inherit it there; no write access for other accounts it lacks)."""
        now, parent = _lstat(target), _lstat(target.parent)
        if now is None or not stat.S_ISDIR(now.st_mode):
            return
        inherited = bool((now.st_mode | (parent.st_mode if parent else 0)) & stat.S_ISGID)
        refused, note = setid_refusal(relative, mode, "applied", inherited)
        self.result.notes += [note] if note else []
        wanted = stat.S_IMODE(mode) & ~refused & ~_widened(mode, target)
        before = self.stamps.get(target)
        if wanted == stat.S_IMODE(now.st_mode) or (target not in self.made and (
                before is None or self.changed(relative, before))):
            return
        with contextlib.suppress(OSError):
            handle = os.open(target, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)  # never a link put there since
            try:
                os.fchmod(handle, wanted)
            finally:
                os.close(handle)

    def file(self, relative: str, source: Path) -> None:
        target = self.root / relative
        if not self.inside(target.parent):
            self.set_aside(relative, source, "a folder on its way now leads out of the project")
            return
        now = _lstat(target)
        if self.conflict(relative, source, target, now):
            return
        if now is not None and stat.S_ISDIR(now.st_mode):
            self.remove(relative)  # the run replaced the folder with a file
            if _lstat(target) is not None:
                self.set_aside(relative, source, "a folder there holds files changed during the run")
                return
            now = None
        _strip_overlay_attributes(source, self.prefix)
        inner = git_inner(relative)
        if inner is not None and not inner.startswith("objects/"):
            if not projectfs.move_under_git_lock(source, target):
                self.set_aside(relative, source, "a git command held its lock file as the run ended")
                return
        else:
            self.keep_before(relative, target, now)
            projectfs.move_into_place(source, target)
        self.record(relative, "created" if now is None else "changed")

    def make_folder(self, relative: str, source: Path) -> bool:
        """The project folder for an upper folder exists (made if the run made it); False when it cannot be."""
        target = self.root / relative
        if not self.inside(target.parent):
            self.result.notes.append(f"{relative}/: a folder on its way now leads out of the project; not applied")
            return False
        now = _lstat(target)
        if now is not None and stat.S_ISDIR(now.st_mode):
            return True
        if self.conflict(relative, source, target, now):
            return False
        if now is not None:
            self.keep_before(relative, target, now)
            target.unlink()  # the run replaced a file or symlink with a folder
            self.record(relative, "removed")
        target.mkdir()
        self.made.add(target)
        return True

    def conflict(self, relative: str, source: Path, target: Path, now: os.stat_result | None) -> bool:
        """Whether someone else changed or deleted `relative` during the run (the run's version is then set aside)."""
        if now is not None and self.changed(relative, now):
            why = "changed by you or another program during the run, and by the run"
        elif now is None and self.deleted_meanwhile(relative, source, target):
            why = "deleted by you or another program during the run, and changed by it"
        else:
            return False
        self.set_aside(relative, source, why)
        return True

    def remove(self, relative: str) -> None:
        """The run deleted `relative`: delete it, except what someone changed during the run (kept, and said)."""
        target = self.root / relative
        now = _lstat(target)
        if now is None or not self.inside(target.parent):
            return
        if stat.S_ISDIR(now.st_mode):
            for name in sorted(os.listdir(target)):
                self.remove(_join(relative, name))
            with contextlib.suppress(OSError):  # something in it was kept
                target.rmdir()
            return
        if self.changed(relative, now):
            self.result.kept.append(relative)
            self.result.notes.append(f"{relative}: the run deleted it, but you or another program changed it during "
                                     "the run; it is kept")
            return
        self.keep_before(relative, target, now)
        target.unlink()
        self.record(relative, "removed")

    def keep_before(self, relative: str, target: Path, now: os.stat_result | None) -> None:
        """Read the project's version of `relative` the run replaces or removes (undo puts a git-ignored one back from
        it): up to KEEP_FILE_BYTES a file within the run's budget, a start-up file always; else its size is kept."""
        if now is None or git_inner(relative) is not None:
            return
        startup = is_startup_file(target.name)
        fits = now.st_size <= KEEP_FILE_BYTES and (startup or now.st_size <= self.budget)
        data = projectfs.read_regular(target, KEEP_FILE_BYTES) if fits else None
        self.budget -= len(data) if data is not None and not startup else 0
        self.result.before[relative] = data if data is not None else now.st_size

    def record(self, relative: str, change: str) -> None:
        if git_inner(relative) is None:
            self.result.written[relative] = change

    def set_aside(self, relative: str, source: Path, why: str) -> None:
        where = self.aside / inert(relative)  # a set-aside `.git/index` must not look like a repository
        projectfs.make_dirs(where.parent)  # a link on the way in .agent/cache/ is refused, never written through
        if _lstat(where) is not None and not _is_dir(where):
            where.unlink()
        if _is_dir(source):  # lstat: never a symlink
            copy_clean(source, where, self.links)  # no special file, hard link out or setuid bit set aside either
        else:
            _strip_overlay_attributes(source, self.prefix)
            projectfs.move_into_place(source, where)
        shown = os.path.relpath(where, self.root)
        self.result.kept.append(relative)
        self.result.aside.append((relative, shown))
        self.result.notes.append(f"{relative}: {why}; yours is kept, the run's version is in {shown}")

    def changed(self, relative: str, info: os.stat_result) -> bool:
        """Whether `relative` (now `info`) is not as it was when the run started."""
        if self.start.knows(relative):
            return not self.start.matches(relative, info)
        return info.st_ctime_ns >= self.since_ns

    def deleted_meanwhile(self, relative: str, source: Path, target: Path) -> bool:
        """`relative`, gone now, was there when the run started (it changed that version: someone deleted it)."""
        if self.start.knows(relative):
            return relative in self.start.stamps
        return self.flag(source, "origin") and self.parent_changed(target)

    def parent_changed(self, target: Path) -> bool:
        if target.parent in self.made:
            return False
        parent = self.stamps[target.parent] if target.parent in self.stamps else _lstat(target.parent)
        return parent is None or parent.st_mtime_ns >= self.since_ns or parent.st_ctime_ns >= self.since_ns

    def inside(self, folder: Path) -> bool:
        return is_inside(Path(os.path.realpath(folder)), self.real_root)

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


def _widened(mode: int, target: Path) -> int:
    """Write access for other accounts the run's `mode` adds to `target`'s (its folder's if not of the same kind)."""
    now = _lstat(target)
    base = now if now is not None and stat.S_IFMT(now.st_mode) == stat.S_IFMT(mode) else _lstat(target.parent)
    return 0 if stat.S_ISLNK(mode) else mode & (stat.S_IWGRP | stat.S_IWOTH) & ~(base.st_mode if base else 0)


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
