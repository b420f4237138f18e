"""Catalog answers built from several parts: drift reports, argument checks before a call, and tool search."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from tui_agent.core.catalog import argcheck
from tui_agent.core.catalog.errors import PipelineError
from tui_agent.core.catalog.files import read_bytes_or_none
from tui_agent.core.catalog.models import DriftReport, ToolSpec, ToolTest
from tui_agent.core.catalog.registry import Entry
from tui_agent.core.catalog.state import UsageStats

if TYPE_CHECKING:
    from tui_agent.core.catalog.api import Catalog


async def build_drift_report(catalog: "Catalog", entry: Entry) -> DriftReport:
    """Dependency files (DEPENDS_ON globs + files runs read) changed since the version's commit, their diff, tests re-run."""
    assert entry.spec is not None and entry.runnable is not None
    spec = entry.spec
    commit = catalog.version_commit(entry)
    files_read = catalog.state.files_read(entry.name)
    checker = catalog.drift_checker
    note = ""
    if commit is None:
        watched = checker.watched_files(None, spec.depends_on, files_read)
        changed: list[str] = []
        diff = ""
        note = "no commit is recorded for this version (no repository, or its commit is deferred): no baseline to compare"
    else:
        watched = checker.watched_files(commit, spec.depends_on, files_read)
        changed = checker.changed_files(commit, watched)
        diff = checker.diff(commit, changed)
    if not watched and not note:
        note = "the tool declares no DEPENDS_ON and no run has read a project file yet"
    data = read_bytes_or_none(entry.runnable) or b""
    tests: tuple[ToolTest, ...] = ()
    test_error = None
    try:
        result = await catalog.pipeline.inspect(entry.name, data, run_tests=True)
        tests = ToolSpec.from_inspection(result, spec.source_sha).tests
        passed: bool | None = True
    except PipelineError as error:
        passed = False
        test_error = error.to_dict()
        tests = tuple(ToolTest(t["name"], bool(t["ok"]), t.get("error"), t.get("line"), float(t.get("duration_ms", 0)))
                      for t in error.details.get("tests", ()))
    return DriftReport(name=entry.name, since_commit=commit, changed_files=tuple(changed), diff=diff,
                       tests_pass=passed, test_error=test_error, watched_files=tuple(watched), note=note, tests=tests)


def check_arguments(spec: ToolSpec, args: Any) -> dict[str, Any]:
    """The call's arguments checked against the tool's input schema (see argcheck.py); raises PipelineError."""
    return argcheck.check_arguments(spec.name, spec.input_schema, args)


def search_specs(specs: list[ToolSpec], usage: dict[str, UsageStats], query: str, limit: int = 20) -> list[ToolSpec]:
    """Tools ranked by how well the query words match their name, description and argument names."""
    words = [w for w in re.split(r"[^a-z0-9]+", query.lower()) if w]
    scored: list[tuple[float, int, str, ToolSpec]] = []
    for spec in specs:
        name = spec.name.lower()
        description = spec.description.lower()
        params = " ".join(spec.input_schema.get("properties", {})).lower()
        score = 0.0
        for word in words:
            score += 3 if word in name else 0
            score += 1 if word in description else 0
            score += 0.5 if word in params else 0
        if words and score == 0:
            continue
        calls = usage[spec.name].calls if spec.name in usage else 0
        scored.append((-score, -calls, spec.name, spec))
    scored.sort(key=lambda item: item[:3])
    return [item[3] for item in scored[:limit]]
