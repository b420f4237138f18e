"""What a writable run changed. Through an overlay (bubblewrap, where it can be mounted): the project is stamped as the
run starts (`overlay.LowerState`), and after it its upper folder goes through the one filtered step (`overlay.apply`
-> harvest.py: protected paths and what a run may not leave refused and quarantined, the person's concurrent changes
kept and the run's set aside, the ignored files' changes derived). Without one (the rlimits tier, a machine where the
overlay cannot be mounted) the run writes the project directly, so `fence` records the protected paths it could
create and stamps the project (the same `LowerState` walk) before it, and `unfence` sweeps and compares after it
(after a crash too: the record stays in `.agent/cache/sweeps/` and `recover_sweeps` sweeps for it at the next start).
Either way its writes (`policy.RunWrites`) and ignored changes are kept for undo."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tui_agent.core import projectfs
from tui_agent.core.project import AGENT_DIR, Project
from tui_agent.core.sandbox import ignored, overlay as overlays
from tui_agent.core.sandbox.launch import probe_overlay
from tui_agent.core.sandbox.launch import project_venvs
from tui_agent.core.sandbox.policy import TIER_BUBBLEWRAP, RunWrites, SandboxPolicy
from tui_agent.core.sandbox.protected import (GIT, Guard, glob_matches, matches_protected, moved_note, new_folder,
                                              user_globs)
from tui_agent.core.versioning.plainfiles import ignored_among

KEPT_RUN_WRITES = 256
PER_CALL_ONLY = ("without an overlay mount, what a run wrote cannot be told apart from what someone else changed "
                 "while it ran: undo attributes changes per call only")
SWEEPS = "sweeps"
GLOB_WATCH_LIMIT = 20_000
"""Matches of the user's globs recorded before a run; past this many, new matches beyond it are not told apart."""


class WritableRuns:
    """What the Sandbox knows about runs that may write the project: whether they go through an overlay (their writes
    attributed exactly), the overlay folders still in use, and what finished runs wrote until undo takes it.

    Notes for the person are appended to `notices` (the Sandbox's own list)."""

    def __init__(self, project: Project, tier: str, scratch: Path, notices: list[str]) -> None:
        self.project = project
        self.tier = tier
        self.notices = notices
        self.venv: Path | None = None
        """The virtualenv the toolchain uses (its start-up files are watched; bound read-only unless asked)."""
        self._scratch = scratch
        self.overlay_problem: str | None = PER_CALL_ONLY if tier != TIER_BUBBLEWRAP else None
        """Why writable runs are not mounted as overlays (their writes not attributed), or None."""
        self.ignored_changes: list[ignored.IgnoredChange] = []
        """Ignored files writable runs changed, until the undo journal takes them (`take_ignored_changes`)."""
        self.run_writes: list[RunWrites] = []
        """What each writable run wrote, until the undo journal takes it (`take_run_writes`)."""
        self._overlays: set[overlays.OverlayDirs] = set()
        """Overlays recorded for workers not finished yet (a warm worker discarded unused is forgotten at `aclose`)."""
        self._unrecorded: dict[overlays.OverlayDirs, str] = {}
        """Why an overlay in use has no crash-recovery record (`overlays.begin` could not write it)."""
        self._told_unrecorded: set[str] = set()
        self._removals: set[asyncio.Future[None]] = set()
        """Overlay folders of finished runs being deleted in the background (`aclose` waits for them)."""
        self._loop = asyncio.get_running_loop()

    def probe_overlay(self) -> str | None:
        """Why this project cannot be mounted as an overlay here, or None (run once, in a thread)."""
        if not overlays.usable_paths(self.project.root, self._scratch):
            return f"the project path has a character an overlay mount cannot carry; {PER_CALL_ONLY}"
        problem = probe_overlay(self._scratch)
        return f"{problem}; {PER_CALL_ONLY}" if problem else None

    def project_writable(self, policy: SandboxPolicy) -> bool:
        """Only bubblewrap can make the project read-only; the rlimits tier runs every call the same way."""
        return policy.project_writable or self.tier != TIER_BUBBLEWRAP

    def attributed(self, policy: SandboxPolicy) -> bool:
        """Whether this run's writes are known exactly: a writable bubblewrap run through an overlay."""
        return self.tier == TIER_BUBBLEWRAP and policy.project_writable and self.overlay_problem is None

    def venv_writable(self, policy: SandboxPolicy) -> bool:
        return policy.venv_writable and self.project_writable(policy) and self.tier == TIER_BUBBLEWRAP

    def lower(self) -> overlays.LowerState:
        """The project's stamps as an overlay run starts (the harvest's only "before": nothing else is walked)."""
        return overlays.LowerState.take(self.project.root)

    def fence(self, policy: SandboxPolicy) -> "Fence":
        """Before a writable run without an overlay: the protected paths it could create (recorded for a crash) and,
        when the policy lets it write the project, the project's stamps and its small ignored files' bytes."""
        root = self.project.root
        watched, start, kept = watch(root), None, {}
        if policy.project_writable:
            start = self.stamps()
            files = {path: stamp[2] for path, stamp in start.stamps.items() if not stat.S_ISDIR(stamp[1])}
            ignored_now = ignored_among(root, [path for path in files if not os.path.isabs(path)])
            read_only = self.tier == TIER_BUBBLEWRAP and not self.venv_writable(policy)
            skip = [os.path.relpath(venv, root) for venv in project_venvs(root, self.venv)] if read_only else []
            kept = ignored.keep(root, {path: files[path] for path in ignored_now if path in files}, skip)
        return Fence(watched, begin(self.project.cache_dir / SWEEPS, watched), start, kept)

    def unfence(self, fence: "Fence") -> list[str]:
        """After a writable run without an overlay: what it created at protected paths moved to the quarantine, its
        ignored files' changes kept for undo; its writes unattributed. The notes (also in `notices`)."""
        self.ran(RunWrites(False))
        notes = sweep(self.project.root, fence.watch)
        if fence.record is not None:
            with contextlib.suppress(OSError):
                fence.record.unlink()
        if fence.start is not None:
            notes += self.compare(fence.start, fence.kept)[0]
        self.notices += notes
        return notes

    def after_fallback(self, lower: overlays.LowerState) -> list[str]:
        """An overlay run whose mount failed ran again without one (dispatch.py), unfenced: what it changed is what
        differs from the project's stamps at its start; new protected paths are swept, ignored files reported."""
        said, created = self.compare(lower, {})
        guard, moved = Guard.of(self.project.root), list[str]()
        for path in sorted(created):
            if guard.covers(path, False) and not any(path.startswith(parent + "/") for parent in moved):
                moved.append(path)
        notes = [*sweep(self.project.root, Watch(dict.fromkeys(moved), frozenset(), ())), *said]
        self.notices += notes
        return notes

    def stamps(self) -> overlays.LowerState:
        """The project's stamps and those of the site folders' start-up files (`ignored.site_dirs`)."""
        state = overlays.LowerState.take(self.project.root)
        state.stamps.update(ignored.startup_stamps(self.project.root, self.venv))
        return state

    def compare(self, start: overlays.LowerState, kept: dict[str, bytes]) -> tuple[list[str], list[str]]:
        """What a run without an overlay changed among the ignored files, from the stamps `start` taken before it and
        `kept`, the bytes read then (the changes kept for undo): (the notes, every path it created, folders too)."""
        now = self.stamps()
        both = {**start.stamps, **now.stamps}
        written = {path: "removed" if path not in now.stamps else "created" if path not in start.stamps else "changed"
                   for path, stamp in both.items()
                   if start.stamps.get(path) != now.stamps.get(path) and not stat.S_ISDIR(stamp[1])}
        before: dict[str, bytes | int] = {path: kept.get(path, start.stamps[path][2]) for path in written
                                          if path in start.stamps}
        said, found = ignored.report(self.project.root, written, before, self.venv, start.complete and now.complete)
        self.ignored_changes += found
        return said, [path for path in now.stamps if path not in start.stamps]

    async def open_overlay(self) -> overlays.OverlayDirs:
        """Fresh overlay folders for a worker about to start, recorded so a crash of tuiagent cannot lose its writes."""
        dirs = overlays.prepare(self._scratch)
        self._overlays.add(dirs)
        unrecorded = await asyncio.to_thread(overlays.begin, self.project.cache_dir, dirs)
        if unrecorded is not None:
            self._unrecorded[dirs] = unrecorded
        return dirs

    def drop_overlay(self, dirs: overlays.OverlayDirs) -> None:
        """The worker for `dirs` never started: forget its record now."""
        self._forget(dirs)
        overlays.finish(self.project.cache_dir, dirs)

    def collect(self, dirs: overlays.OverlayDirs, since: int, lower: overlays.LowerState | None) -> list[str]:
        """Apply what an overlay run wrote onto the project and record exactly that for undo, its ignored files' changes
        too (its notes returned, also in `notices`)."""
        unrecorded = self._unrecorded_note(dirs)  # before `remove_later` (on the loop) forgets the overlay
        root = self.project.root
        try:
            found = overlays.apply(dirs, root, self.project.cache_dir, since, lower)
        finally:
            self._loop.call_soon_threadsafe(self.remove_later, dirs)
        self.ran(RunWrites(True, tuple(found.paths), tuple(found.kept), tuple(found.aside)))
        said, changes = ignored.report(root, found.written, found.before, self.venv)
        self.ignored_changes += changes
        notes = [*unrecorded, *found.notes, *said]
        self.notices += notes
        return notes

    def _unrecorded_note(self, dirs: overlays.OverlayDirs) -> list[str]:
        """The note for a run whose overlay had no record: said once per reason (a full disk or an unwritable
        `.agent/cache` would otherwise repeat it on every writable run)."""
        reason = self._unrecorded.pop(dirs, None)
        if reason is None or reason in self._told_unrecorded:
            return []
        self._told_unrecorded.add(reason)
        return [f"writable runs cannot be recorded for crash recovery: {reason}. Had tuiagent stopped during this "
                "run, the next start would not have applied what it wrote (it would stay in the sandbox's temporary "
                "folder); free space, or make .agent/cache/overlays a folder tuiagent can write to. Said once."]

    def _forget(self, dirs: overlays.OverlayDirs) -> None:
        self._overlays.discard(dirs)
        self._unrecorded.pop(dirs, None)

    def remove_later(self, dirs: overlays.OverlayDirs) -> None:
        """Deleting even empty folders takes milliseconds on a busy disk: not on the run's path."""
        self._forget(dirs)
        removal = self._loop.run_in_executor(None, overlays.finish, self.project.cache_dir, dirs)
        self._removals.add(removal)
        removal.add_done_callback(self._removals.discard)

    def ran(self, writes: RunWrites) -> None:
        """Keep what a run wrote until undo takes it; nobody taking them (no undo outside git) keeps only the last
        ones, behind a marker that makes their call unattributed (undo then counts every change as the agent's)."""
        self.run_writes.append(writes)
        if len(self.run_writes) > KEPT_RUN_WRITES:
            self.run_writes = [RunWrites(False), *self.run_writes[-KEPT_RUN_WRITES + 1:]]

    def take_run_writes(self) -> list[RunWrites]:
        found, self.run_writes = self.run_writes, []
        return found

    def take_ignored_changes(self) -> list[ignored.IgnoredChange]:
        found, self.ignored_changes = self.ignored_changes, []
        return found

    async def aclose(self) -> None:
        """Wait for the background removals; forget the records of warm workers that never ran (they would outlive
        this process)."""
        await asyncio.gather(*self._removals, return_exceptions=True)
        for dirs in list(self._overlays):
            self._forget(dirs)
            await asyncio.to_thread(overlays.finish, self.project.cache_dir, dirs)


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
    project, the stamps (`WritableRuns.stamps`) and the bytes of its small ignored files."""

    watch: Watch
    record: Path | None
    start: overlays.LowerState | None
    kept: dict[str, bytes]


def watch(root: Path) -> Watch:
    """The protected paths a run without an overlay could create or replace in `root` (where a dangling protected link
    lands too); a run through an overlay has them refused by its harvest instead."""
    guard = Guard.of(root, GLOB_WATCH_LIMIT)
    absent = [name for name in guard.names if not os.path.lexists(root / name)]
    return Watch({**dict.fromkeys(guard.landings), **guard.links, **dict.fromkeys(absent)}, guard.matches,
                 guard.patterns)


def sweep(root: Path, before: Watch, *, since: float | None = None) -> list[str]:
    """Move every protected path a run without an overlay created or replaced into one new
    `.agent/quarantine/<time>-<id>/` folder (a replaced symlink is put back); one note per path, saying exactly what
    was moved where.

    `since` (a record read back after a crash, so untrusted): only paths changed since then move, and no symlink
    is recreated (the note says what it pointed to)."""
    moves: list[tuple[str, str, str | None]] = []
    for relative, link in before.fixed.items():
        path = root / relative
        now = os.readlink(path) if path.is_symlink() else ("" if os.path.lexists(path) else None)
        if now != link and (since is None or (now is not None and _changed_since(path, since))):
            moves.append((relative, "created" if link is None else "replaced", link))
    found: list[str] = []
    for relative in sorted(glob_matches(root, before.patterns, limit=GLOB_WATCH_LIMIT)) if before.patterns else []:
        if (relative in before.globbed or relative.split("/")[0] in (GIT, AGENT_DIR)
                or any(relative.startswith(parent + "/") for parent in found)):
            continue  # known before, git's or tuiagent's own, or inside a new folder moved whole
        found.append(relative)
        if since is None or _changed_since(root / relative, since):
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
            if link is not None and since is None:
                os.symlink(link, path)
            notes.append(moved_note(verb, relative, str(target.relative_to(root)), link, restored=since is None))
        except OSError as error:
            notes.append(f"agent code {verb} the protected path {relative} and it could not be moved away "
                         f"({error}); check it before you use it")
    return notes


def _changed_since(path: Path, since: float) -> bool:
    try:
        return path.lstat().st_ctime >= since
    except OSError:
        return False


def begin(records: Path, before: Watch) -> Path | None:
    """Record the watch in `records` so that a crash during the run does not skip the sweep; None if it cannot be
    written."""
    record = records / f"{os.getpid()}-{secrets.token_hex(4)}.json"
    try:
        projectfs.write_atomic(record, json.dumps(before.to_json()).encode("utf-8"), sync=False)
    except OSError:
        return None
    return record


def recover_sweeps(root: Path, records: Path) -> list[str]:
    """Sweep for the records of runs without an overlay whose tuiagent process died before it could."""
    notes: list[str] = []
    for record in overlays.dead_records(records):
        try:
            written = record.stat().st_mtime
            before = Watch.from_json(json.loads(projectfs.read_text(record)), lambda name: _protected(root, name))
        except (OSError, ValueError):
            before = None
        if before is not None:
            current = Watch(before.fixed, before.globbed, user_globs(root))  # the person's globs, not the record's
            notes += [f"{note} (a run interrupted earlier)" for note in sweep(root, current, since=written)]
        with contextlib.suppress(OSError):  # a read-only project: swept again at the next start, moving nothing new
            record.unlink()
    return notes


def _protected(root: Path, relative: str) -> bool:
    return ".." not in Path(relative).parts and matches_protected(root, relative) is not None
