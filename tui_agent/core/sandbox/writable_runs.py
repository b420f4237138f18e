"""What a writable run changed: stamps before one; after it its overlay applied through the one filtered step
(`overlay.apply` -> `harvest.py`: refused paths quarantined, the person's concurrent changes kept and the run's set
aside) and its ignored files compared; its writes (`policy.RunWrites`) and ignored changes kept for undo."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tui_agent.core.project import Project
from tui_agent.core.sandbox import ignored, lowerstate, overlay as overlays
from tui_agent.core.sandbox.launch import probe_overlay
from tui_agent.core.sandbox.policy import TIER_BUBBLEWRAP, RunWrites, SandboxPolicy

KEPT_RUN_WRITES = 256
PER_CALL_ONLY = ("without an overlay mount, what a run wrote cannot be told apart from what someone else changed "
                 "while it ran: undo attributes changes per call only")


class WritableRuns:
    """What the Sandbox knows about runs that may write the project: whether they go through an overlay (their writes
    attributed exactly), the overlay folders still in use, and what finished runs wrote until undo takes it.

    Notes for the person are appended to `notices` (the Sandbox's own list)."""

    def __init__(self, project: Project, tier: str, scratch: Path, notices: list[str]) -> None:
        self.project = project
        self.tier = tier
        self.notices = notices
        self.venv: Path | None = None
        """The virtualenv the toolchain uses (its ignored files are watched; bound read-only unless asked)."""
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

    def before(self, policy: SandboxPolicy, attributed: bool) -> tuple[ignored.IgnoredState, lowerstate.LowerState | None]:
        """Before a writable run: its ignored files, and (through an overlay) the project's stamps as it starts."""
        read_only = self.tier == TIER_BUBBLEWRAP and not self.venv_writable(policy)
        ignored_state = ignored.before_run(self.project.root, self.venv, venvs_read_only=read_only)
        return ignored_state, lowerstate.take(self.project.root, ignored_state) if attributed else None

    def ignored_after(self, ignored_before: ignored.IgnoredState) -> list[str]:
        """After a writable run: keep the ignored files it changed for undo; the notes about them (also in `notices`)."""
        changed, found = ignored.after_run(self.project.root, self.venv, ignored_before)
        self.ignored_changes += found
        self.notices += changed
        return changed

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

    def collect(self, dirs: overlays.OverlayDirs, since: int, lower: lowerstate.LowerState | None) -> list[str]:
        """Apply what an overlay run wrote onto the project and record exactly that for undo (its notes returned)."""
        unrecorded = self._unrecorded_note(dirs)  # before `remove_later` (on the loop) forgets the overlay
        try:
            found = overlays.apply(dirs, self.project.root, self.project.cache_dir, since, lower)
        finally:
            self._loop.call_soon_threadsafe(self.remove_later, dirs)
        self.ran(RunWrites(True, tuple(found.paths), tuple(found.kept), tuple(found.aside)))
        notes = [*unrecorded, *found.notes]
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
