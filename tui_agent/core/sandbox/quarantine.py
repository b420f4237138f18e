"""After-run quarantine: protected paths a project-writable run created or replaced are moved to `.agent/quarantine/`.

Why they are not blocked during the run: a bubblewrap bind needs a mount point, and a missing path's mount point
is a new file in the user's project (bwrap leaves an empty read-only file there) for as long as the sandbox lives,
a warm fork server: the whole session. Removing it on the host while the sandbox runs detaches the sandbox's
mount (the kernel lazily unmounts a mount point unlinked in another namespace), so the sandbox can create the
path again. Landlock and seccomp cannot refuse one name in a folder while allowing others there. An overlay of
the project (bubblewrap 0.10+, not 0.8) needs a work folder on the project's file system outside the project,
and changes the user makes meanwhile are undefined behaviour for it. So tuiagent records what could appear
before each such run and sweeps right after it (after a crash too: the record stays in `.agent/cache/sweeps/`
and the next sandbox start sweeps for it).
"""

from __future__ import annotations

import json
import os
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tui_agent.core import projectfs
from tui_agent.core.catalog.files import process_alive
from tui_agent.core.project import AGENT_DIR
from tui_agent.core.sandbox import protected

QUARANTINE = protected.QUARANTINE
SWEEPS = f"{AGENT_DIR}/cache/sweeps"
GLOB_WATCH_LIMIT = 20_000
"""Matches of the user's globs recorded before a run; past this many, new matches beyond it are not told apart."""
NEVER_SWEPT = (".git", AGENT_DIR)
"""Folders whose contents the glob sweep never moves (git's and tuiagent's own state, changed by the host)."""


@dataclass(frozen=True)
class Watch:
    """What a writable run could create or replace: protected paths that are absent (None) or symlinks (their
    target; a bind protects only what a link points to), and the matches of the user's globs before the run."""

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


def watch(root: Path) -> Watch:
    """What to compare against after a writable run in `root`."""
    patterns = protected.user_globs(root)
    matches = protected.glob_matches(root, patterns, limit=GLOB_WATCH_LIMIT)
    links = {match: os.readlink(root / match) for match in matches if (root / match).is_symlink()}
    fixed = {**links, **protected.unbound(root)}
    return Watch({**dangling_targets(root, fixed), **fixed}, frozenset(matches), patterns)


def dangling_targets(root: Path, fixed: dict[str, str | None]) -> dict[str, str | None]:
    """Where protected symlinks that point nowhere yet would land inside the project: creating that file would
    give the protected path its content, so it is watched as absent too."""
    inside = os.path.realpath(root)
    targets: dict[str, str | None] = {}
    for relative, link in fixed.items():
        path = root / relative
        if link is None or path.exists():
            continue
        landing = os.path.realpath(path)
        if landing.startswith(inside + os.sep):
            targets[Path(landing).relative_to(inside).as_posix()] = None
    return targets


def sweep(root: Path, before: Watch, *, since: float | None = None) -> list[str]:
    """Move every protected path the run created or replaced into one new `.agent/quarantine/<time>-<id>/` folder
    (a replaced symlink is put back); one note per path, saying exactly what was moved where.

    `since` (a record read back after a crash, so untrusted): only paths changed since then move, and no symlink
    is recreated (the note says what it pointed to).
    """
    mover = _Mover(root)
    for relative, link in before.fixed.items():
        path = root / relative
        now = os.readlink(path) if path.is_symlink() else ("" if os.path.lexists(path) else None)
        if now != link and (since is None or (now is not None and _changed_since(path, since))):
            mover.move(relative, "created" if link is None else "replaced",
                       restore_link=link if since is None else None, was_link=link)
    for relative in new_glob_matches(root, before):
        if since is None or _changed_since(root / relative, since):
            mover.move(relative, "created", restore_link=None, was_link=None)
    return mover.notes


def _changed_since(path: Path, since: float) -> bool:
    try:
        return path.lstat().st_ctime >= since
    except OSError:
        return False


def new_glob_matches(root: Path, before: Watch) -> list[str]:
    """Paths matching the user's globs now that did not before (outermost only, outside `.git` and `.agent`)."""
    if not before.patterns:
        return []
    found: list[str] = []
    for relative in sorted(protected.glob_matches(root, before.patterns, limit=GLOB_WATCH_LIMIT)):
        if relative in before.globbed or relative.split("/")[0] in NEVER_SWEPT:
            continue
        if any(relative.startswith(parent + "/") for parent in found):
            continue  # inside a new folder that is moved whole
        found.append(relative)
    return found


class _Mover:
    """Moves paths into one quarantine folder of this sweep, created on first use (never through a symlink)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.folder: Path | None = None
        self.notes: list[str] = []

    def move(self, relative: str, verb: str, *, restore_link: str | None, was_link: str | None) -> None:
        path = self.root / relative
        try:
            target = self._folder() / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            if os.path.lexists(path):
                os.rename(path, target)  # the same file system: the path itself moves, never what a link points to
            if restore_link is not None:
                os.symlink(restore_link, path)
            put_back = (f"; the symlink to {restore_link} was put back" if restore_link is not None else
                        f"; it was a symlink to {was_link} (recreate it if you want it)" if was_link is not None else "")
            self.notes.append(f"agent code {verb} the protected path {relative}; moved to "
                              f"{target.relative_to(self.root)}{put_back}; nothing else was changed: look at it, "
                              f"then delete it or move it back yourself")
        except OSError as error:
            self.notes.append(f"agent code {verb} the protected path {relative} and it could not be moved away "
                              f"({error}); check it before you use it")

    def _folder(self) -> Path:
        if self.folder is None:
            self.folder = new_folder(self.root)
        return self.folder


def new_folder(root: Path) -> Path:
    """A new `.agent/quarantine/<time>-<id>/` folder (never made through a symlink)."""
    base = root / QUARANTINE
    base.mkdir(parents=True, exist_ok=True)
    if os.path.realpath(base) != os.path.join(os.path.realpath(root), QUARANTINE):
        raise OSError(f"{QUARANTINE} is not a plain folder of the project (a symlink on the way)")
    folder = base / f"{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}"
    folder.mkdir()
    return folder


def begin(root: Path, before: Watch, records: Path | None = None) -> Path | None:
    """Record the watch (in `records`, by default `.agent/cache/sweeps`) so that a crash during the run does not skip
    the sweep; None if it cannot be written."""
    folder = records or root / SWEEPS
    record = folder / f"{os.getpid()}-{secrets.token_hex(4)}.json"
    try:
        projectfs.write_atomic(record, json.dumps(before.to_json()).encode("utf-8"), sync=False)
    except OSError:
        return None
    return record


def finish(record: Path | None) -> None:
    if record is not None:
        try:
            record.unlink()
        except OSError:
            pass


def recover(root: Path, records: Path | None = None) -> list[str]:
    """Sweep for the records of runs whose tuiagent process died before it could (at the next sandbox start)."""
    notes: list[str] = []
    folder = records or root / SWEEPS
    if not folder.is_dir() or folder.is_symlink():
        return notes
    for record in sorted(folder.glob("*.json")):
        pid = record.name.split("-")[0]
        if pid.isdigit() and process_alive(int(pid)):
            continue
        try:
            written = record.stat().st_mtime
            before = Watch.from_json(json.loads(projectfs.read_text(record)), lambda name: _protected(root, name))
        except (OSError, ValueError):
            before = None
        if before is not None:
            current = Watch(before.fixed, before.globbed, protected.user_globs(root))  # the user's globs, not the record's
            notes += [f"{note} (a run interrupted earlier)" for note in sweep(root, current, since=written)]
        finish(record)
    return notes


def _protected(root: Path, relative: str) -> bool:
    return ".." not in Path(relative).parts and protected.matches_protected(root, relative) is not None
