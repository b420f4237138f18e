"""Drift status: which dependency files of a tool changed, and whether its own tests still pass against them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tui_agent.core.catalog.models import DriftReport
from tui_agent.core.catalog.registry import Entry
from tui_agent.core.catalog.reports import build_drift_report

if TYPE_CHECKING:
    from tui_agent.core.catalog.api import Catalog

DRIFTED = "drifted"
DRIFTED_FAILING = "drifted · failing"


def changed_dependencies(catalog: Catalog, entry: Entry, commit: str | None) -> list[str]:
    """The tool's dependency files (DEPENDS_ON and files its runs read) that differ from `commit` in the work tree."""
    if entry.spec is None or not commit:
        return []
    files_read = catalog.state.files_read(entry.name)
    if not (entry.spec.depends_on or files_read):
        return []
    watched = catalog.drift_checker.watched_files(commit, entry.spec.depends_on, files_read)
    return catalog.drift_checker.changed_files(commit, watched)


def status_of(catalog: Catalog, entry: Entry, commit: str | None, known: dict[str, tuple[str, bool]]) -> str | None:
    """`drifted`, `drifted · failing` (its tests failed against these very file contents), or None (no drift)."""
    changed = changed_dependencies(catalog, entry, commit)
    if not changed or entry.spec is None:
        return None
    fingerprint = catalog.drift_checker.fingerprint(entry.spec.source_sha, changed)
    return DRIFTED_FAILING if known.get(entry.name) == (fingerprint, False) else DRIFTED


def remember(catalog: Catalog, entry: Entry, report: DriftReport) -> None:
    """Keep the outcome of a drift report's test run for the dependency contents it was made against."""
    if entry.spec is not None and report.changed_files and report.tests_pass is not None:
        fingerprint = catalog.drift_checker.fingerprint(entry.spec.source_sha, report.changed_files)
        catalog.state.set_drift_test(entry.name, fingerprint, report.tests_pass)


async def recheck(catalog: Catalog) -> list[DriftReport]:
    """Re-run the tests of drifted tools not yet checked against their current dependency files (new failures)."""
    catalog.drift_checker.fresh()
    known = catalog.state.drift_tests()
    reports: list[DriftReport] = []
    for entry in catalog.registry.entries():
        commit = catalog.version_commit(entry)
        changed = changed_dependencies(catalog, entry, commit)
        if not changed or entry.spec is None or entry.runnable is None:
            continue
        fingerprint = catalog.drift_checker.fingerprint(entry.spec.source_sha, changed)
        if known.get(entry.name, ("", True))[0] == fingerprint:
            continue
        report = await build_drift_report(catalog, entry)
        remember(catalog, entry, report)
        reports.append(report)
    return reports
