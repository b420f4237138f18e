"""DriftTracker: owns drift state (test outcomes, reviews) and its operations: status, report, recheck, accept.

A tool drifts when a dependency file (DEPENDS_ON matches, files its runs read) changed since the reference: the
commit its version was written at, or the review a person accepted (`drift_reviews`). A file that merely appeared
(a new log matching `logs/*.log`) is no drift unless the tool's own tests then fail."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from tui_agent.core.catalog.drift import DriftChecker
from tui_agent.core.catalog.drift_reviews import REVIEWS_PATH, Review, dump_reviews, load_reviews
from tui_agent.core.catalog.errors import PipelineError
from tui_agent.core.catalog.files import atomic_write, read_bytes_or_none
from tui_agent.core.catalog.models import DriftReport, ToolSpec, ToolTest, broken_label
from tui_agent.core.catalog.registry import Entry
from tui_agent.core.catalog.state import StateStore
from tui_agent.core.project import Project
from tui_agent.core.versioning.gitstore import CommitOutcome
from tui_agent.core.versioning.writelock import WriterLock

DRIFTED = "drifted"
DRIFTED_FAILING = "drifted · failing"


class Inspecting(Protocol):
    """The part of the pipeline drift needs: re-run a version's tests, commit a catalog file."""

    writer: WriterLock

    async def inspect(self, name: str, data: bytes, *, run_tests: bool) -> dict[str, Any]: ...
    async def commit(self, changes: dict[str, bytes | None], message: str) -> CommitOutcome: ...


@dataclass(frozen=True)
class Assessment:
    """One tool version against its reference: what is watched, what changed, what appeared."""

    reference: dict[str, str | None]
    watched: list[str]
    changed: list[str]
    added: list[str]
    reviewed: Review | None


class DriftTracker:
    """Drift for one catalog. `version_commit(entry)` gives the commit a registered version was written at."""

    def __init__(self, project: Project, state: StateStore, pipeline: Inspecting,
                 version_commit: Callable[[Entry], str | None], author: Callable[[], str],
                 store_blobs: Callable[[list[str]], None] | None = None) -> None:
        self.project = project
        self.state = state
        self.pipeline = pipeline
        self.version_commit = version_commit
        self.author = author
        self.store_blobs = store_blobs
        self.checker = DriftChecker(project.root)
        self.failing: dict[str, str] = {}  # drifted tools whose tests fail -> the source_sha they failed at
        self._known: dict[str, tuple[str, bool]] = {}
        self._reviews: dict[str, Review] = {}

    def fresh(self) -> None:
        """Forget the work tree seen so far and reload test outcomes and reviews (before each batch of checks)."""
        self.checker.fresh()
        self._known = self.state.drift_tests()
        self._reviews = load_reviews(self.project.root)

    def assess(self, entry: Entry) -> Assessment | None:
        """None when there is nothing to compare against (no spec, no commit and no review) or nothing watched."""
        if entry.spec is None:
            return None
        review = self._reviews.get(entry.name)
        review = review if review is not None and review.source_sha == entry.spec.source_sha else None
        commit = self.version_commit(entry)
        if commit is None and review is None:
            return None
        files_read = self.state.files_read(entry.name)
        if not (entry.spec.depends_on or files_read):
            return None
        watched = self.checker.watched_files(commit, entry.spec.depends_on, [*files_read, *(review.files if review else ())])
        reference = self.checker.reference(commit, review.files if review else None)
        if review is None and commit is not None:
            reference = {**reference, **self._untracked_baseline(entry, commit, reference, watched)}
        changed, added = self.checker.compare(reference, watched)
        return Assessment(reference, watched, changed, added, review)

    def _untracked_baseline(self, entry: Entry, commit: str, reference: dict[str, str | None],
                            watched: list[str]) -> dict[str, str]:
        """Dependency files as they were when this version was written, where git's `commit` has them otherwise (not
        at all, or without the person's uncommitted edits) and they are older than it: their blobs when first seen,
        kept in state.db, so a later edit is drift and a file that appears later is not (never drifted at birth)."""
        assert entry.spec is not None
        kept = self.state.drift_baseline(entry.name, entry.spec.source_sha)
        if kept is None:
            kept = {}
            for rel in watched:
                blob = self.checker.current_blob(rel)
                if blob is not None and reference.get(rel) != blob and self.checker.older_than(commit, rel):
                    kept[rel] = blob
            edited = [rel for rel in kept if rel in reference]
            if edited and self.store_blobs is not None:  # so a later drift diff can show what they were
                self.store_blobs(edited)
            self.state.set_drift_baseline(entry.name, entry.spec.source_sha, kept)
        return kept

    def status(self, entry: Entry) -> str | None:
        """`drifted`, `drifted · failing` (its tests failed against these very files), or None (no drift). A broken
        file has no drift status: it is broken."""
        if entry.error is not None:
            return None
        found = self.assess(entry)
        if found is None or entry.spec is None or not (found.changed or found.added):
            return None
        failing = self._known.get(entry.name) == (self._fingerprint(entry.spec, found), False)
        if failing:
            return DRIFTED_FAILING
        return DRIFTED if found.changed else None

    def _fingerprint(self, spec: ToolSpec, found: Assessment) -> str:
        return self.checker.fingerprint(spec.source_sha, [*found.changed, *found.added])

    async def report(self, entry: Entry) -> DriftReport:
        """The changed files' diff since the reference and a fresh run of the tool's tests (remembered)."""
        assert entry.spec is not None and entry.runnable is not None
        found = self.assess(entry)
        commit = self.version_commit(entry)
        note = ""
        if found is None:
            watched = self.checker.watched_files(None, entry.spec.depends_on, self.state.files_read(entry.name))
            changed: list[str] = []
            added: list[str] = []
            diff = ""
            note = ("no commit is recorded for this version (no repository, or its commit is deferred): no baseline to "
                    "compare" if commit is None else "")
        else:
            watched, changed, added = found.watched, found.changed, found.added
            diff = self.checker.diff(found.reference, changed)
            if found.reviewed is not None:
                note = f"compared with the review accepted at {(found.reviewed.commit or 'an unknown commit')[:8]}"
        if not watched and not note:
            note = "the tool declares no DEPENDS_ON and no run has read a project file yet"
        passed, tests, test_error = await self._run_tests(entry)
        broken = ""
        if entry.error is not None:
            broken = f"{broken_label(entry.error)}: {entry.error.message}"
            note = (note + "; " if note else "") + "the file on disk is broken: this is the last good version's drift"
        report = DriftReport(name=entry.name, since_commit=commit, changed_files=tuple(changed), diff=diff,
                             tests_pass=passed, test_error=test_error, watched_files=tuple(watched), note=note,
                             tests=tests, added_files=tuple(added), broken=broken,
                             reviewed_at=found.reviewed.commit if found is not None and found.reviewed else None)
        if found is not None and (changed or added) and passed is not None:
            self.state.set_drift_test(entry.name, self._fingerprint(entry.spec, found), passed)
        return report

    async def _run_tests(self, entry: Entry) -> tuple[bool | None, tuple[ToolTest, ...], dict[str, Any] | None]:
        assert entry.spec is not None and entry.runnable is not None
        data = read_bytes_or_none(entry.runnable) or b""
        try:
            result = await self.pipeline.inspect(entry.name, data, run_tests=True)
            return True, ToolSpec.from_inspection(result, entry.spec.source_sha).tests, None
        except PipelineError as error:
            tests = tuple(ToolTest(t["name"], bool(t["ok"]), t.get("error"), t.get("line"), float(t.get("duration_ms", 0)))
                          for t in error.details.get("tests", ()))
            return False, tests, error.to_dict()

    async def recheck(self, entries: list[Entry]) -> list[DriftReport]:
        """Re-run the tests of tools whose dependency files changed or appeared and were not checked against them yet."""
        self.fresh()
        reports: list[DriftReport] = []
        for entry in entries:
            if entry.error is not None or entry.spec is None or entry.runnable is None:
                continue
            found = self.assess(entry)
            if found is None or not (found.changed or found.added):
                continue
            if self._known.get(entry.name, ("", True))[0] == self._fingerprint(entry.spec, found):
                continue
            reports.append(await self.report(entry))
        self._known = self.state.drift_tests()
        return reports

    async def accept(self, entry: Entry, head: str | None) -> CommitOutcome:
        """Mark the tool's drift reviewed: its dependency files as they are now become its reference (committed in
        `.agent/drift-reviews.json`, so teammates agree). The caller holds the catalog's lock."""
        if entry.spec is None or entry.error is not None:
            raise PipelineError("missing", f"{entry.name} is {broken_label(entry.error)}: fix the file before accepting "
                                           "its drift")
        self.fresh()
        found = self.assess(entry)
        if found is None:
            raise PipelineError("missing", f"{entry.name} has nothing to compare (no commit, no DEPENDS_ON, no file read)")
        files = {rel: self.checker.current_blob(rel) for rel in found.watched}
        if self.store_blobs is not None:  # uncommitted dependency contents too, so a later drift diff can show them
            await asyncio.to_thread(self.store_blobs, [rel for rel, blob in files.items() if blob is not None])
        reviews = dict(self._reviews)
        reviews[entry.name] = Review(entry.spec.source_sha, head, files, self.author())
        data = dump_reviews(reviews)
        path = self.project.root / REVIEWS_PATH
        async with self.pipeline.writer.hold():
            atomic_write(path, data)
            outcome = await self.pipeline.commit({REVIEWS_PATH: data}, f"tuiagent: accept drift of tool {entry.name} "
                                                                         f"(reviewed at {(head or 'no commit')[:8]})")
        self._reviews = reviews
        return outcome
