"""What a run may not leave and where what it may not leave goes: the one judgment (`Leftovers`, `setid_refusal`) the
harvest (over an overlay's upper folder) and a run without an overlay (`ignored.refuse_left`, over the project's stamps)
both call, and the quarantine's inert copies (`new_folder`, `put_clean`/`copy_clean`: no special file, setid bit, hard
link out, nor repository by its name) both keep what they refuse in."""

from __future__ import annotations

import os
import secrets
import shutil
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tui_agent.core import projectfs
from tui_agent.core.sandbox.protected import (GIT, QUARANTINE, REPOSITORY, REPOSITORY_MARKS, SETID_BITS, git_inner,
                                              nested_repository, setid_words, special_kind)
from tui_agent.core.versioning.gitintake import git_refusal

QUARANTINED_NAMES = {GIT: "dot-git", "HEAD": "HEAD.quarantined"}
"""The names a copy in the quarantine (or a run's version set aside) gets instead: git takes no folder without a
`.git` or a `HEAD` for a repository, so no git command there obeys the copy's config or hooks."""


def moved_note(verb: str, relative: str, where: str, link: str | None, restored: bool = True) -> str:
    """What the person and the model are told of a protected path a run created or replaced (`link`: the symlink
    that was there, in place again unless not `restored`)."""
    put_back = ("" if link is None else f"; the symlink to {link} was put back" if restored else
                f"; it was a symlink to {link} (recreate it if you want it)")
    return (f"agent code {verb} the protected path {relative}; moved to {where}{put_back}; nothing else was changed: "
            "look at it, then delete it or move it back yourself")


def new_folder(root: Path) -> Path:
    """A new `.agent/quarantine/<time>-<id>/` folder (never made through a symlink)."""
    base = root / QUARANTINE
    base.mkdir(parents=True, exist_ok=True)
    if os.path.realpath(base) != os.path.join(os.path.realpath(root), QUARANTINE):
        raise OSError(f"{QUARANTINE} is not a plain folder of the project (a symlink on the way)")
    folder = base / f"{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}"
    folder.mkdir()
    return folder


def inert(relative: str) -> str:
    """`relative` with every `.git` and `HEAD` in it renamed (QUARANTINED_NAMES): a copy kept there is no repository."""
    return "/".join(QUARANTINED_NAMES.get(part, part) for part in relative.split("/"))


class HardLinks:
    """Which files of an upper folder share their data with a file outside it (a hard link out of the run's writes):
    counted once, on the first multiply-linked file met."""

    def __init__(self, upper: Path) -> None:
        self.upper = upper
        self._inside: dict[tuple[int, int], int] | None = None

    def outside(self, info: os.stat_result) -> bool:
        if info.st_nlink <= 1 or stat.S_ISDIR(info.st_mode):
            return False
        if self._inside is None:
            self._inside = {}
            for folder, folders, files in os.walk(self.upper):
                for name in (*folders, *files):
                    try:
                        found = os.lstat(os.path.join(folder, name))
                    except OSError:
                        continue
                    if found.st_nlink > 1 and not stat.S_ISDIR(found.st_mode):
                        key = (found.st_dev, found.st_ino)
                        self._inside[key] = self._inside.get(key, 0) + 1
        return self._inside.get((info.st_dev, info.st_ino), 0) < info.st_nlink


def copy_clean(source: Path, target: Path, links: HardLinks) -> None:
    """Copy `source` (an upper folder's entry) to `target` for the person to look at: folders, plain files without
    setuid or setgid bits, symlinks as links; no special file, no hard link out of the run, no `.git` nor `HEAD` by
    its name (`inert`: the copy is no repository for git); never through a link at `target` or on its way (a `.git`
    link copied as `dot-git` is there before a `dot-git/` beside it)."""
    info = os.lstat(source)
    projectfs.refuse_links(target)
    if stat.S_ISDIR(info.st_mode):
        projectfs.make_dirs(target)
        for entry in sorted(os.listdir(source)):
            copy_clean(source / entry, free_name(target / inert(entry)), links)
        os.chmod(target, (info.st_mode & 0o777) | 0o700)
    elif stat.S_ISLNK(info.st_mode):
        os.symlink(os.readlink(source), target)
    elif stat.S_ISREG(info.st_mode) and not links.outside(info):
        shutil.copyfile(source, target, follow_symlinks=False)
        os.chmod(target, info.st_mode & 0o777)


def free_name(path: Path) -> Path:
    """`path`, or a name beside it that nothing has yet: an entry named like another's inert name (`dot-git` beside
    a `.git`) gets its own copy, neither written into the other's nor making the copy fail (the no-overlay move then
    keeps the run's entry raw)."""
    while os.path.lexists(path):
        path = path.with_name(f"{path.name}-{secrets.token_hex(2)}")
    return path


def put_clean(source: Path, folder: Path, relative: str, links: HardLinks) -> Path:
    """Copy `source` into `folder` as `relative` made `inert`, as `copy_clean` copies it; where it is."""
    where = free_name(folder / inert(relative))
    projectfs.make_dirs(where.parent)
    copy_clean(source, where, links)
    return where


def setid_refusal(path: str, mode: int, verb: str, inherited: bool = False) -> tuple[int, str]:
    """The setuid and setgid bits a run may not leave on `path` (a file or folder of `mode`; a folder keeps a setgid
    bit it `inherited`: new folders get their parent's), and the note saying it was `verb` ("applied", "kept")
    without them ("" when none)."""
    if stat.S_ISDIR(mode):
        refused = mode & (stat.S_ISUID if inherited else SETID_BITS)
        return refused, f"{path}/: {verb} without its {setid_words(refused)} bit" if refused else ""
    refused = mode & SETID_BITS if stat.S_ISREG(mode) else 0
    return refused, (f"{path}: {verb} without its {setid_words(refused)} bit (a run may not leave a program that runs "
                     "as you when someone else starts it)" if refused else "")


@dataclass(frozen=True)
class Leftovers:
    """The one judgment of what a run may not leave in the project, for the harvest (an overlay's upper folder) and
    for a run without an overlay (the project's stamps before and after it), each seeing the run's result through:
    `marks`, which of REPOSITORY_MARKS a folder ("" the project) has as the run leaves it; `had`, whether a folder
    was a repository of the person's before the run, and still is that folder (what the run wrote in it is judged as
    in a `.git`); `links_out`, where a regular file the run left leads when it shares its data with a file not the run's
    (`OUTSIDE`, or "the project had before the run"), else None; `git_folder`: the project has a real `.git` folder."""

    marks: Callable[[str], set[str]]
    had: Callable[[str], bool]
    links_out: Callable[[str, os.stat_result], str | None]
    git_folder: bool = True

    def refusal(self, path: str, info: os.stat_result) -> tuple[str, bool] | None:
        """Why the run may not leave `path` (`info`: as it left it), and whether what it left is worth a look (kept
        in the quarantine; a special file, a hard link out, a lock or git's compressed objects are not), or None."""
        kind = special_kind(info.st_mode)
        if kind is not None:
            return f"the run made a special file there ({kind})", False
        why = self.repository(path, info.st_mode)
        if why is not None:
            inner = git_inner(path) or ""
            return why, not (inner.endswith(".lock") or inner.startswith("objects/"))
        linked = self.links_out(path, info) if stat.S_ISREG(info.st_mode) else None
        return None if linked is None else (f"a hard link to a file {linked}", False)

    def repository(self, path: str, mode: int) -> str | None:
        """Why `path` (of `mode`) is a repository's entry a run may not leave: a `.git` below the root or a folder
        with git's layout (`nested_repository`), unless the person's; at the root, which cannot be refused, one of its
        marks giving it that layout; what of a `.git` (the project's, or one the person had) a commit does not write."""
        inner = git_inner(path)
        if inner is not None and not nested_repository(path):
            return git_refusal(inner, mode, self.git_folder)
        folders = [*([path] if stat.S_ISDIR(mode) or nested_repository(path) else []),
                   *([""] if path in REPOSITORY_MARKS else [])]
        if any(nested_repository(folder, self.marks(folder)) and not self.had(folder) for folder in folders):
            return REPOSITORY
        parts = path.split("/")
        for depth in range(len(parts) - 1, 0, -1):  # the nearest repository of the person's the path is in
            if self.had("/".join(parts[:depth])):
                return git_refusal("/".join(parts[depth:]), mode, self.git_folder)
        return None
