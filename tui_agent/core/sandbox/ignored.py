"""What a writable run changed beyond what the harvest applies, and where refused writes go: the changes among the
files git ignores (a virtualenv, build output): neither `git status` nor /undo shows them, so each change is told to
the person and the model; a `.pth`, `sitecustomize.py` or `usercustomize.py` created or changed anywhere an
interpreter reads is flagged on its own (issue 23).

`report` takes what a run wrote: through an overlay, what the harvest applied (with the bytes it replaced, read as it
replaced them); without one (the rlimits tier, a machine where the overlay cannot be mounted), what differs between
the project's stamps before and after the run (`compare`), with the bytes `keep` read before it. Such a run is also
swept (`sweep`): each protected path it created or replaced is moved to `.agent/quarantine/`, and what it left that
no run may leave (leftovers.Leftovers, the harvest's judgment) is refused (`refuse_left`). Both paths keep what
they refuse there cleaned alike (`put_clean`: no special file, setid bit, hard link out, nor repository)."""

from __future__ import annotations

import contextlib
import functools
import os
import secrets
import shutil
import stat
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tui_agent.core import globs, projectfs
from tui_agent.core.project import AGENT_DIR
from tui_agent.core.sandbox.leftovers import HardLinks, Leftovers, inert, moved_note, new_folder, put_clean, setid_refusal
from tui_agent.core.sandbox.protected import (CHANGE_SLACK_NS, GIT, GLOB_WATCH_LIMIT, OUTSIDE, REFUSED,
                                              REPOSITORY_MARKS, WALK_LIMIT, FullStamp, Guard, LowerState, Stamp,
                                              is_startup_file, nested_repository, shown, site_dirs, stamp_of)
from tui_agent.core.versioning.plainfiles import ignored_among

CACHE_NAMES = frozenset({"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis"})
"""Folders a test run rewrites every time: their changes are not reported."""
LISTED = 20
KEEP_FILE_BYTES = 256 * 1024
KEEP_TOTAL_BYTES = 16 * 1024 * 1024
KEEP_FILES = 5_000
"""What is read of the files a run changes at most (for /undo): files up to 256 KiB, 16 MiB and 5,000 files in all;
a start-up file's bytes always."""
@dataclass(frozen=True)
class IgnoredChange:
    """One ignored file a run created, changed or removed; `before` holds its bytes before the run when they were kept,
    else `not_kept` says why; `after` is its stamp after the run (None: removed), to tell a later change apart."""

    path: str
    change: str
    after: Stamp | None
    before: bytes | None = None
    not_kept: str = ""


def compare(root: Path, venv: Path | None, start: LowerState,
            kept: dict[str, bytes]) -> tuple[list[str], list[IgnoredChange], list[str]]:
    """What a run without an overlay changed, from the stamps `start` taken before it (with `site_dirs`) and `kept`,
    the bytes read then: what no run may leave refused first (`refuse_left`), then the ignored files' changes told:
    (the notes, the changes kept for undo, every path it created and left, folders too)."""
    now = LowerState.take(root, sites=site_dirs(root, venv))
    if not (start.complete and now.complete):  # what the run left past either walk: found by its change time
        now.stamps.update(LowerState.take(root, sys.maxsize, since_ns=start.taken_ns - CHANGE_SLACK_NS).stamps)
    refused, gone = refuse_left(root, start, now)
    for path in gone:
        del now.stamps[path]
    both = {**start.stamps, **now.stamps}
    written = {path: "removed" if path not in now.stamps else "created" if path not in start.stamps else "changed"
               for path, stamp in both.items()
               if start.stamps.get(path) != now.stamps.get(path) and not stat.S_ISDIR(stamp[1])
               and (start.knows(path) or os.path.isabs(path))}  # past the walk, "created" could be the person's file
    before: dict[str, bytes | int] = {path: kept.get(path, start.stamps[path][2]) for path in written
                                      if path in start.stamps}
    said, found = report(root, written, before, venv, start.complete and now.complete)
    return [*refused, *said], found, [path for path in now.stamps if path not in start.stamps]


def refuse_left(root: Path, start: LowerState, now: LowerState) -> tuple[list[str], set[str]]:
    """Refuse what a run without an overlay created or changed (`now` against `start`) that no run may leave, judged
    as the harvest judges an upper folder (leftovers.Leftovers): what is worth a look moved to `.agent/quarantine/` as
    the harvest's copy is kept (`put_clean`), the rest (a special file, a hard link out of the run's writes: its data
    stays where the other links are) removed, a setuid or setgid bit stripped; one note each: (the notes, the stamped
    paths no longer in the project). Past either walk (`now` then holds what changed since the run started too), a
    folder's marks are read on disk and a repository not stamped is the person's as its change times tell
    (`_untouched_repository`)."""
    partial = not (start.complete and now.complete)
    touched = sorted(path for path, stamp in now.stamps.items()
                     if path and not os.path.isabs(path) and start.stamps.get(path) != stamp)
    created = Counter(now.stamps[path][0] for path in touched if path not in start.stamps)

    def links_out(path: str, info: os.stat_result) -> str | None:  # more links than the run made: to what, then
        if path in start.stamps or info.st_nlink <= created[info.st_ino]:
            return None
        had = any(stamp[0] == info.st_ino and not stat.S_ISDIR(stamp[1]) for stamp in start.stamps.values())
        return "the project had before the run" if had else OUTSIDE

    def marks(folder: str) -> set[str]:
        return _marks(folder, now) | (_marks_on_disk(root, folder) if partial else set())

    judge = Leftovers(functools.cache(marks), functools.cache(lambda folder: _had(root, folder, start, now)),
                      links_out)
    notes: list[str] = []
    moved: tuple[str, ...] = ()  # folders moved whole, each with a trailing "/"
    folder: Path | None = None
    for path in touched:
        if path.startswith(moved):
            continue
        target = root / path
        try:
            info = os.lstat(target)
            if (found := judge.refusal(path, info)) is None:
                inherited = stat.S_ISDIR(info.st_mode) and bool(os.lstat(target.parent).st_mode & stat.S_ISGID)
                setid, note = setid_refusal(path, info.st_mode, "kept", inherited)
                if setid:
                    os.chmod(target, stat.S_IMODE(info.st_mode) & ~setid)
                    notes.append(note)
                continue
            if found[1]:
                folder = folder or new_folder(root)
                notes.append(f"{path}: {REFUSED}{found[0]}; moved to {_move_clean(root, path, folder)}")
            else:
                target.unlink()  # a hard link's data stays where the other links are
                notes.append(f"{path}: {REFUSED}{found[0]}; removed")
        except OSError as error:
            notes.append(f"{path}: {REFUSED}a run may not leave it, and it could not be taken away ({error}); check "
                         "it before you use it")
            continue
        moved += (path + "/",)
    return notes, {path for path in now.stamps if path.startswith(moved) or path + "/" in moved}


def _marks(folder: str, state: LowerState) -> set[str]:
    """Which of REPOSITORY_MARKS `folder` (a project path, "" the project) had in `state`'s stamps."""
    prefix = f"{folder}/" if folder else ""
    return {mark for mark in REPOSITORY_MARKS if prefix + mark in state.stamps}


def _marks_on_disk(root: Path, folder: str) -> set[str]:
    return {mark for mark in REPOSITORY_MARKS if os.path.lexists(root / folder / mark)}


def _had(root: Path, folder: str, start: LowerState, now: LowerState) -> bool:
    """Whether `folder` is a repository the person had: the same folder, a `.git` or with git's layout at the start
    (past a walk: as its stamp now and `_untouched_repository` tell)."""
    was, stamp = start.stamps.get(folder), now.stamps.get(folder)
    if stamp is None and not now.complete:
        with contextlib.suppress(OSError):
            stamp = stamp_of(os.lstat(root / folder))
    if was is None and not start.knows(folder):
        return stamp is not None and _untouched_repository(root, folder, stamp, start.taken_ns - CHANGE_SLACK_NS)
    return (was is not None and stamp is not None and was[0] == stamp[0] and stat.S_ISDIR(was[1])
            and stat.S_ISDIR(stamp[1]) and nested_repository(folder, _marks(folder, start)))


def _untouched_repository(root: Path, folder: str, stamp: FullStamp, since_ns: int) -> bool:
    """Whether `folder` (now `stamp`), never stamped, is a repository the person had before the run: a `.git` that was
    there, or a folder with git's layout then. A name made in, renamed into or linked into a folder during the run has
    a change time since then (`since_ns`): an entry older was in that folder before the run. In doubt, not: what the
    run wrote there is then judged as what it created."""
    if not stat.S_ISDIR(stamp[1]):
        return False
    old = set[str]()
    for mark in REPOSITORY_MARKS:
        with contextlib.suppress(OSError):
            if os.lstat(root / folder / mark).st_ctime_ns < since_ns:
                old.add(mark)
    if nested_repository(folder):  # a `.git`, whatever it holds: there before the run if it or one of its marks was
        return stamp[4] < since_ns or bool(old)
    return nested_repository(folder, old)


def _move_clean(root: Path, relative: str, folder: Path) -> str:
    """Move `relative` out of the project into `folder` (one rename), then keep there what the harvest keeps of a
    refused path (`put_clean`); where."""
    moving = folder / f".{secrets.token_hex(4)}.moving"
    os.rename(root / relative, moving)  # the same file system: the path itself moves, never what a link points to
    try:
        where = put_clean(moving, folder, relative, HardLinks(moving))
    except OSError:
        return str(moving.relative_to(root))  # out of the project all the same, as the run left it
    if stat.S_ISDIR(os.lstat(moving).st_mode):
        shutil.rmtree(moving)
    else:
        moving.unlink()
    return str(where.relative_to(root))


Move = tuple[str, str, str | None]  # a project path, what the run did there, the person's symlink there to put back


def sweep(root: Path, before: Guard, *, since_ns: int | None = None) -> list[str]:
    """Move every protected path a run without an overlay created or replaced into one new
    `.agent/quarantine/<time>-<id>/` folder (a replaced symlink is put back); one note per path, saying exactly what
    was moved where. A symlink or file it left on the way to them (`Guard.ways`) moves first, itself (never what it
    points to), with what lies below it; nothing moves through a symlink the person did not have (`Guard.standing`).

    `since_ns` (a record read back after a crash, so untrusted): only paths changed since then move, and no symlink
    is recreated (the note says what it pointed to)."""
    folder: list[Path] = []  # made at the first move
    notes: list[str] = []
    moved: tuple[str, ...] = ()  # each with a trailing "/": what lay below it moved with it
    for move in _moves(root, before):
        if not move[0].startswith(moved) and (since_ns is None or _changed_since(root / move[0], since_ns)):
            notes.append(_move(root, before, move, since_ns, folder))
            moved += (move[0] + "/",)
    return notes


def _moves(root: Path, before: Guard) -> Iterator[Move]:
    """What the run left where `before` guards: a symlink or file on a way (shortest first; for a folder, nothing, or
    the person's own, put back after), then each protected path it created or replaced, then each new match of the
    person's globs (sorted: a folder before its files; none in git's or tuiagent's own folder)."""
    for way in sorted(before.ways, key=lambda way: (way.count("/"), way)):
        now, was = _now(root / way), before.standing.get(way)
        if now is not None and now != was and (now != "" or not os.path.isdir(root / way)):
            yield way, f"left a {'file' if now == '' else 'symlink'} at", was or None
    for relative, link in before.fixed.items():
        if _now(root / relative) != link:
            yield relative, "created" if link is None else "replaced", link
    for relative in globs.matching_paths(root, before.patterns, limit=GLOB_WATCH_LIMIT):
        if relative not in before.matches and relative.split("/")[0] not in (GIT, AGENT_DIR):
            yield relative, "created", None


def _now(path: Path) -> str | None:
    """What is at `path`: a symlink's target, "" for anything else, None for nothing."""
    try:
        return os.readlink(path) if stat.S_ISLNK(os.lstat(path).st_mode) else ""
    except OSError:
        return None


def _move(root: Path, before: Guard, move: Move, since_ns: int | None, folder: list[Path]) -> str:
    """Move one path into the quarantine `folder` (made if empty) as `_move_clean` does, never through a symlink the
    person did not have (`Guard.standing`), and put back the person's symlink; its note."""
    (relative, verb, link), path, parts = move, root / move[0], move[0].split("/")
    try:
        for above in ("/".join(parts[:depth]) for depth in range(1, len(parts))):
            if os.path.islink(root / above) and before.standing.get(above) != os.readlink(root / above):
                raise OSError(f"{above} on its way is a symlink the run left: nothing was moved through it")
        folder[:] = folder or [new_folder(root)]
        where = _move_clean(root, relative, folder[0]) if os.path.lexists(path) else str(
            (folder[0] / inert(relative)).relative_to(root))
        if link is not None and since_ns is None:
            os.symlink(link, path)
        return moved_note(verb, relative, where, link, restored=since_ns is None)
    except OSError as error:
        return (f"agent code {verb} the protected path {relative} and it could not be moved away ({error}); check it "
                "before you use it")


def _changed_since(path: Path, since_ns: int) -> bool:
    try:
        return path.lstat().st_ctime_ns >= since_ns
    except OSError:
        return False


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
    with contextlib.suppress(OSError):
        return stamp_of(path.lstat())[2:]
    return None


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
        data = projectfs.read_regular(root / name, KEEP_FILE_BYTES)
        if data is not None:
            kept[name] = data
            budget -= len(data)
    return kept
