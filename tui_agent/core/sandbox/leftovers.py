"""What an overlay run may leave behind: the rules the harvest checks each entry of a run's upper folder against
(nested repositories, git's own folder, setuid and setgid bits, special files, hard links out of the run), and the
quarantine copy of what it refuses."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

REFUSED = "refused: "
"""In every note about a write the sandbox refused: the call that made it is not shown as a success."""
GIT = ".git"
GIT_COMMIT_FOLDERS = frozenset({"objects", "refs", "logs", "lfs"})
GIT_COMMIT_FILES = frozenset({
    "index", "HEAD", "COMMIT_EDITMSG", "ORIG_HEAD", "FETCH_HEAD", "MERGE_HEAD", "MERGE_MSG", "MERGE_MODE", "MERGE_RR",
    "CHERRY_PICK_HEAD", "REVERT_HEAD", "REBASE_HEAD", "AUTO_MERGE", "packed-refs",
})
GIT_NOT_DATA = frozenset({"objects/info/alternates", "objects/info/http-alternates"})
"""What of the project's own `.git` an approved writable run may change: what commits and merges write. Everything
else there (`config`, `hooks/`, `info/`, `modules/`, `commondir`, where objects come from, and a rebase's or
cherry-pick's state, whose to-do list may `exec` commands when the person continues it) decides what git runs or
reads from where, on the person's machine: never applied."""
GIT_READ_ONLY = ("config", "config.worktree", "commondir", "hooks", "info", "modules", "worktrees")
"""Entries of `.git` bound read-only inside a run that may commit, so that writing them fails at once."""
SETID_BITS = stat.S_ISUID | stat.S_ISGID
QUARANTINED_GIT = "dot-git"
"""The name a refused `.git` gets in the quarantine: no git command takes the copy for a repository."""


def git_inner(relative: str) -> str | None:
    """The path inside the project's own `.git` (`""` for `.git` itself), or None outside it."""
    if relative == GIT:
        return ""
    return relative[len(GIT) + 1:] if relative.startswith(GIT + "/") else None


def inert(relative: str) -> str:
    """`relative` with every `.git` in it renamed: a copy kept there is no repository for git."""
    return "/".join(QUARANTINED_GIT if part == GIT else part for part in relative.split("/"))


def git_writable(inner: str) -> bool:
    """Whether a run may change `.git/<inner>` (a path inside git's folder, not `.git` itself)."""
    first = inner.split("/", 1)[0]
    return (first in GIT_COMMIT_FOLDERS and inner not in GIT_NOT_DATA) or inner in GIT_COMMIT_FILES


def git_lock(inner: str) -> bool:
    """A lock file an interrupted git command left (never applied: it would block the person's git)."""
    return inner.endswith(".lock")


def nested_repository(relative: str) -> bool:
    """A `.git` below the project root: a repository whose config and hooks tuiagent's own git would obey."""
    return relative.rsplit("/", 1)[-1] == GIT and "/" in relative


def special_kind(mode: int) -> str | None:
    """What kind of file the project must not receive (None for folders, files and symlinks)."""
    if stat.S_ISFIFO(mode):
        return "FIFO"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device node"
    return None


def setid_words(mode: int) -> str:
    """"setuid", "setgid" or "setuid and setgid" for the bits `mode` carries."""
    words = [word for bit, word in ((stat.S_ISUID, "setuid"), (stat.S_ISGID, "setgid")) if mode & bit]
    return " and ".join(words)


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
            self._inside = self._count()
        return self._inside.get((info.st_dev, info.st_ino), 0) < info.st_nlink

    def _count(self) -> dict[tuple[int, int], int]:
        counts: dict[tuple[int, int], int] = {}
        for folder, folders, files in os.walk(self.upper):
            for name in (*folders, *files):
                try:
                    info = os.lstat(os.path.join(folder, name))
                except OSError:
                    continue
                if info.st_nlink > 1 and not stat.S_ISDIR(info.st_mode):
                    key = (info.st_dev, info.st_ino)
                    counts[key] = counts.get(key, 0) + 1
        return counts


def copy_clean(source: Path, target: Path, links: HardLinks) -> None:
    """Copy `source` (an upper folder's entry) to `target` for the person to look at: folders, plain files without
    setuid or setgid bits, symlinks as links; no special file, no hard link out of the run, no `.git` by its name."""
    info = os.lstat(source)
    if stat.S_ISDIR(info.st_mode):
        target.mkdir(mode=0o700, parents=True, exist_ok=True)
        for entry in sorted(os.listdir(source)):
            copy_clean(source / entry, target / (QUARANTINED_GIT if entry == GIT else entry), links)
        os.chmod(target, (info.st_mode & 0o777) | 0o700)
    elif stat.S_ISLNK(info.st_mode):
        os.symlink(os.readlink(source), target)
    elif stat.S_ISREG(info.st_mode) and not links.outside(info):
        shutil.copyfile(source, target, follow_symlinks=False)
        os.chmod(target, info.st_mode & 0o777)
