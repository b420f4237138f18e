"""What every writable run leaves behind, taken back the one way its tier allows (`WritableRuns`), kept until undo takes it.

Through an overlay (bubblewrap, where it can be mounted) the project is the lower layer and the run's upper folder lies
outside it, so what a run wrote is exactly what that folder holds; see `sandbox status`. Its folders are made before
the run (`launch.prepare`), the project stamped as it starts (`protected.LowerState`), recorded in `.agent/cache/overlays/`
while it runs (`begin`, `finish`), and applied after it by the one filtered step (`apply` -> harvest.py: protected
paths and what a run may not leave refused and quarantined, the person's concurrent changes kept and the run's set
aside, the ignored files' changes derived). Without an overlay (the weak tier, a machine where the overlay cannot be
mounted) the run writes the project directly: `fence` records the protected paths it could create (`protected.Guard`,
in `.agent/cache/sweeps/`) and stamps the project before it, `unfence` sweeps and compares after it (ignored.py); an overlay run
whose mount failed, run again without one, is checked against the stamps of its start (`after_mount_failed`). What a
run wrote before tuiagent died is applied, or swept, at the next sandbox start (`recover`)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import stat
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tui_agent.core import projectfs
from tui_agent.core.catalog.files import process_alive
from tui_agent.core.project import Project
from tui_agent.core.sandbox import ignored
from tui_agent.core.sandbox.harvest import Harvest, harvest
from tui_agent.core.sandbox.launch import OverlayDirs, prepare, probe_overlay
from tui_agent.core.sandbox.policy import TIER_BUBBLEWRAP, RunWrites, SandboxPolicy
from tui_agent.core.sandbox.protected import (GLOB_WATCH_LIMIT, QUARANTINE, REFUSED, Guard, LowerState, project_venvs,
                                              site_dirs)
from tui_agent.core.tempfolders import AWAITING_RECOVERY
from tui_agent.core.textsafety import printable
from tui_agent.core.versioning.plainfiles import ignored_among

KEPT_RUN_WRITES = 256
PER_CALL_ONLY = ("without an overlay mount, what a run wrote cannot be told apart from what someone else changed "
                 "while it ran: undo attributes changes per call only")
MOUNT_FAILED = 125
"""The launcher's exit status when the overlay could not be mounted (the worker never started; `launch.py` mounts it)."""

RECORDS = "overlays"
SWEEPS = "sweeps"
MAX_TOLD = 10
"""Notes of one run told in full (one per refused entry: thousands would flood the person and the model); the rest are
counted in one more line, each entry still refused and quarantined. More than protected.MAX_NOTES: kinds mix here."""
MAX_NOTE_CHARS = 1_000


def apply(dirs: OverlayDirs, root: Path, cache_dir: Path, since_ns: int, start: LowerState | None = None) -> Harvest:
    """Apply the run's upper folder onto the project (the overlay is unmounted: its processes are gone); the caller
    deletes the overlay's folders. `start`: the project's stamps as the run started (None after a crash).
    A run's version that cannot be applied goes to `.agent/cache/run-versions/<run>/`."""
    aside = cache_dir / "run-versions" / f"{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}"
    return harvest(dirs.upper, root, since_ns=since_ns, aside=aside, rootless=dirs.rootless, start=start)


def record_path(folder: Path, name: str) -> Path:
    return folder / f"{os.getpid()}-{name}.json"


def write_record(record: Path, data: object) -> Path:
    """Write a crash record in one step, no link followed in .agent/cache/ (OSError when it cannot be written)."""
    projectfs.write_atomic(record, json.dumps(data).encode("utf-8"), sync=False)
    return record


def forget(record: Path | None) -> None:
    """Delete a crash record (a read-only project keeps it: the next start finds it again)."""
    with contextlib.suppress(OSError):
        if record is not None:
            record.unlink(missing_ok=True)


def dead_records(folder: Path) -> Iterator[tuple[Path, object, int]]:
    """The records (`record_path`) in `folder` of tuiagent processes that are gone (a crash, a kill): (record, its JSON
    (hostile input, None when unreadable), its time in ns); the caller `forget`s each one it is done with."""
    if not folder.is_dir() or folder.is_symlink():
        return
    for record in sorted(folder.glob("*.json")):
        if (pid := record.name.split("-")[0]).isdigit() and process_alive(int(pid)):
            continue
        try:
            data, written = json.loads(projectfs.read_text(record)), record.stat().st_mtime_ns
        except (OSError, ValueError):
            data, written = None, 0
        yield record, data, written


def begin(cache_dir: Path, dirs: OverlayDirs) -> str | None:
    """Record an overlay as its worker starts (ahead of its run: nothing on the run's path). Its time is the record's
    own, earlier than the run: recovery then errs towards keeping what changed meanwhile. Unwritable: no record, and
    why (a crash during that run would leave its writes unapplied) is returned."""
    record = record_path(cache_dir / RECORDS, dirs.folder.name)
    try:
        write_record(record, {"folder": str(dirs.folder), "rootless": dirs.rootless})
        (dirs.folder / AWAITING_RECOVERY).write_text(str(record), encoding="utf-8")  # other processes' sweeps keep it
    except OSError as error:
        return f"{error.strerror or error} ({record.parent})"
    return None


def finish(cache_dir: Path, dirs: OverlayDirs) -> None:
    """The overlay's run was applied (or never ran): forget it (a read-only project has none) and delete its folders."""
    forget(record_path(cache_dir / RECORDS, dirs.folder.name))
    dirs.remove()


def recover(root: Path, cache_dir: Path) -> list[str]:
    """Apply the upper folders of runs whose tuiagent process died during them, then sweep for the runs without an
    overlay that died before their sweep; one note per path it applied, kept or moved.

    A record is hostile input (a file in the project): only an overlay folder this user made under the temporary
    folder is read, and only with the harvest's own rules; only protected paths are swept, only if changed since."""
    notes: list[str] = []
    for record, data, since in dead_records(cache_dir / RECORDS):
        dirs = _overlay_of(data)
        if dirs is not None:
            try:
                harvest = apply(dirs, root, cache_dir, since)
            except OSError as error:  # a read-only project: its writes stay where they are, for a later start
                notes.append(f"what a run interrupted earlier wrote is in {dirs.upper}; it could not be applied "
                             f"to the project: {error.strerror or error}")
                continue
            notes += [f"{path}: written by a run interrupted earlier; applied" for path in harvest.paths]
            notes += [f"{note} (a run interrupted earlier)" for note in harvest.notes]
            dirs.remove()
        forget(record)  # a read-only project: the record stays; its folder is gone, the next start drops it
    for record, data, written in dead_records(cache_dir / SWEEPS):
        before = Guard.from_json(data, root)
        if before is not None:
            notes += [f"{note} (a run interrupted earlier)" for note in ignored.sweep(root, before, since_ns=written)]
        forget(record)  # a read-only project: swept again at the next start, moving nothing new
    return notes


def _overlay_of(data: object) -> OverlayDirs | None:
    if not (isinstance(data, dict) and isinstance(data.get("folder"), str) and isinstance(data.get("rootless"), bool)):
        return None
    folder, temp = Path(data["folder"]), Path(os.path.realpath(tempfile.gettempdir()))
    try:  # ValueError: a path with a NUL byte
        real = Path(os.path.realpath(folder))
        if (real != folder or real.parent.parent != temp or not real.parent.name.startswith("tuiagent-sandbox-")
                or not real.name.startswith("overlay-") or real.stat().st_uid != os.geteuid()
                or not (real / "upper").is_dir()):
            return None
    except (OSError, ValueError):
        return None
    return OverlayDirs(real, data["rootless"])


@dataclass(frozen=True)
class Fence:
    """A writable run without an overlay, as it starts: the protected paths it could create or replace and their crash
    record; when it may write the project, its stamps (the site folders' start-up files too) and the bytes of its small
    ignored files."""

    guard: Guard
    record: Path | None
    start: LowerState | None
    kept: dict[str, bytes]


class WritableRuns:
    """What the Sandbox knows about runs that may write the project: whether they go through an overlay (their writes
    attributed exactly), the overlay folders still in use, and what finished runs wrote until undo takes it (runs
    without an overlay too: `fence`, `unfence`).

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
        self._overlays: dict[OverlayDirs, str | None] = {}
        """Overlays recorded for workers not finished yet (a warm worker discarded unused is forgotten at `aclose`),
        each with why it has no crash-recovery record (`begin` could not write it), or None."""
        self._told_unrecorded: set[str] = set()
        self._removals: set[asyncio.Future[None]] = set()
        """Overlay folders of finished runs being deleted in the background (`aclose` waits for them)."""
        self._loop = asyncio.get_running_loop()

    def probe_overlay(self) -> None:
        """Find out whether this project can be mounted as an overlay here (once, in a thread): `overlay_problem`
        says why not."""
        problem = probe_overlay(self._scratch) if self.overlay_problem is None else None
        if problem:
            self.overlay_problem = f"{problem}; {PER_CALL_ONLY}"

    def project_writable(self, policy: SandboxPolicy) -> bool:
        """Only bubblewrap can make the project read-only; the rlimits tier runs every call the same way."""
        return policy.project_writable or self.tier != TIER_BUBBLEWRAP

    def attributed(self, policy: SandboxPolicy) -> bool:
        """Whether this run's writes are known exactly: a writable bubblewrap run through an overlay."""
        return self.tier == TIER_BUBBLEWRAP and policy.project_writable and self.overlay_problem is None

    def venv_writable(self, policy: SandboxPolicy) -> bool:
        return policy.venv_writable and self.project_writable(policy) and self.tier == TIER_BUBBLEWRAP

    def lower(self) -> LowerState:
        """The project's stamps as an overlay run starts (the harvest's only "before": nothing else is walked), with the
        site folders' start-up files (a run whose mount failed is compared with them: `after_mount_failed`)."""
        return LowerState.take(self.project.root, sites=site_dirs(self.project.root, self.venv))

    async def open_overlay(self) -> OverlayDirs:
        """Fresh overlay folders for a worker about to start, recorded so a crash of tuiagent cannot lose its writes."""
        dirs = prepare(self._scratch)
        self._overlays[dirs] = None
        self._overlays[dirs] = await asyncio.to_thread(begin, self.project.cache_dir, dirs)
        return dirs

    def drop_overlay(self, dirs: OverlayDirs) -> None:
        """The worker for `dirs` never started: forget its record now."""
        self._overlays.pop(dirs, None)
        finish(self.project.cache_dir, dirs)

    def collect(self, dirs: OverlayDirs, since: int, lower: LowerState | None) -> list[str]:
        """Apply what an overlay run wrote onto the project and record exactly that for undo, its ignored files' changes
        too (its notes returned, also in `notices`)."""
        unrecorded = self._unrecorded_note(dirs)  # before `remove_later` (on the loop) forgets the overlay
        root = self.project.root
        try:
            found = apply(dirs, root, self.project.cache_dir, since, lower)
        finally:
            self._loop.call_soon_threadsafe(self.remove_later, dirs)
        self.ran(RunWrites(True, tuple(found.paths), tuple(found.kept), tuple(found.aside)))
        said, changes = ignored.report(root, found.written, found.before, self.venv)
        return self.told([*unrecorded, *found.notes, *said], changes)

    def _unrecorded_note(self, dirs: OverlayDirs) -> list[str]:
        """The note for a run whose overlay had no record: said once per reason (a full disk or an unwritable
        `.agent/cache` would otherwise repeat it on every writable run)."""
        reason = self._overlays.get(dirs)
        if reason is None or reason in self._told_unrecorded:
            return []
        self._told_unrecorded.add(reason)
        return [f"writable runs cannot be recorded for crash recovery: {reason}. Had tuiagent stopped during this "
                "run, the next start would not have applied what it wrote (it would stay in the sandbox's temporary "
                "folder); free space, or make .agent/cache/overlays a folder tuiagent can write to. Said once."]

    def remove_later(self, dirs: OverlayDirs) -> None:
        """Deleting even empty folders takes milliseconds on a busy disk: not on the run's path."""
        self._overlays.pop(dirs, None)
        removal = self._loop.run_in_executor(None, finish, self.project.cache_dir, dirs)
        self._removals.add(removal)
        removal.add_done_callback(self._removals.discard)

    def fence(self, policy: SandboxPolicy) -> Fence:
        """Before a writable run without an overlay: the protected paths it could create (recorded for a crash) and,
        when it may write the project, the project's stamps and its small ignored files' bytes (not those of the
        virtualenvs it cannot write)."""
        root, start, kept = self.project.root, None, {}
        guard = Guard.of(root, GLOB_WATCH_LIMIT)
        if policy.project_writable:
            start = self.lower()
            files = {path: stamp[2] for path, stamp in start.stamps.items() if not stat.S_ISDIR(stamp[1])}
            ignored_now = ignored_among(root, [path for path in files if not os.path.isabs(path)])
            read_only_venvs = self.tier == TIER_BUBBLEWRAP and not self.venv_writable(policy)
            skip = [os.path.relpath(folder, root) for folder in project_venvs(root, self.venv)] if read_only_venvs else []
            kept = ignored.keep(root, {path: files[path] for path in ignored_now if path in files}, skip)
        record = None  # unwritable: a crash during the run skips its sweep
        with contextlib.suppress(OSError):
            record = write_record(record_path(self.project.cache_dir / SWEEPS, secrets.token_hex(4)), guard.to_json())
        return Fence(guard, record, start, kept)

    def unfence(self, fenced: Fence) -> list[str]:
        """After a writable run without an overlay: what it created at protected paths moved to the quarantine, what
        no run may leave refused (`ignored.refuse_left`), its writes kept for undo unattributed with its ignored files'
        changes (its notes returned, also in `notices`)."""
        self.ran(RunWrites(False))
        notes = ignored.sweep(self.project.root, fenced.guard)
        forget(fenced.record)
        if fenced.start is None:
            return self.told(notes, [])
        said, changes, _created = ignored.compare(self.project.root, self.venv, fenced.start, fenced.kept)
        return self.told(notes + said, changes)

    def after_mount_failed(self, lower: LowerState) -> list[str]:
        """An overlay run whose mount failed ran again without one (dispatch.py), unfenced: what it changed is what
        differs from the project's stamps at its start; what no run may leave is refused, new protected paths are
        swept, ignored files reported."""
        root = self.project.root
        said, changes, created = ignored.compare(root, self.venv, lower, {})
        guard, moved = Guard.of(root), list[str]()
        for path in sorted(created):
            if guard.covers(path, False) and not any(path.startswith(parent + "/") for parent in moved):
                moved.append(path)
        return self.told([*ignored.sweep(root, Guard(dict.fromkeys(moved))), *said], changes)

    def ran(self, writes: RunWrites) -> None:
        """Keep what a run wrote until undo takes it; nobody taking them (no undo outside git) keeps only the last
        ones, behind a marker that makes their call unattributed (undo then counts every change as the agent's)."""
        self.run_writes.append(writes)
        if len(self.run_writes) > KEPT_RUN_WRITES:
            self.run_writes = [RunWrites(False), *self.run_writes[-KEPT_RUN_WRITES + 1:]]

    def told(self, notes: list[str], changes: list[ignored.IgnoredChange]) -> list[str]:
        """Keep a run's ignored changes for undo, its notes for the person (the caller's too: returned), as they may be
        shown: the run's file names in them printable, one line each, at most `MAX_TOLD` of them and a count."""
        self.ignored_changes += changes
        shown = [_printable(note) for note in notes[:MAX_TOLD]]
        if len(notes) > MAX_TOLD:
            shown.append(_more(notes[MAX_TOLD:]))
        self.notices += shown
        return shown

    def take_run_writes(self) -> list[RunWrites]:
        """What each writable run wrote since the last call (the undo journal attributes each call's changes)."""
        found, self.run_writes = self.run_writes, []
        return found

    def take_ignored_changes(self) -> list[ignored.IgnoredChange]:
        """The ignored files writable runs changed since the last call (the undo journal records them per turn)."""
        found, self.ignored_changes = self.ignored_changes, []
        return found

    async def aclose(self) -> None:
        """Wait for the background removals; forget the records of warm workers that never ran (they would outlive
        this process)."""
        await asyncio.gather(*self._removals, return_exceptions=True)
        for dirs in list(self._overlays):
            self._overlays.pop(dirs, None)
            await asyncio.to_thread(finish, self.project.cache_dir, dirs)


def _printable(note: str) -> str:
    """`note` as it may be shown (textsafety.printable: a newline in a file name cannot add a line), a long one cut
    (still saying whether it tells of a refused write)."""
    shown = printable(note)
    if len(shown) <= MAX_NOTE_CHARS:
        return shown
    return f"{shown[:MAX_NOTE_CHARS]}… (shortened{f'; {REFUSED}a write not applied' if REFUSED in shown else ''})"


def _more(notes: list[str]) -> str:
    """The one line told for the notes past `MAX_TOLD`: how many, how many were refused writes, where copies are."""
    refused = sum(REFUSED in note for note in notes)
    said = f"and {len(notes)} more notes about this run's writes, not told one by one"
    if refused:
        said += f" ({REFUSED}{refused} of them were writes not applied)"
    if any(f"{QUARANTINE}/" in note for note in notes):
        said += f"; what was moved or copied is under {QUARANTINE}/"
    return said
