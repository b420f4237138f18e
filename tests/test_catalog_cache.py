"""The validation cache keeps failures too: a broken tool that has not changed costs nothing at the next start."""

from __future__ import annotations

import time
from pathlib import Path

from tests.catalog_support import tool_source
from tui_agent.core.catalog.api import Catalog
from tui_agent.core.catalog.inspector import INSPECTOR_VERSION
from tui_agent.core.catalog.toolfile import source_sha
from tui_agent.core.project import Project
from tui_agent.core.auditlog import AuditLog
from tui_agent.core.sandbox import Sandbox

HANGS = tool_source("hangs", extra="while True:\n    pass\n")
OTHER = '\n\ndef other(x: int) -> int:\n    """Same bytes, another tool."""\n    return x\n'


def inspections(project: Project, name: str) -> int:
    """How many times the sandbox ran the inspector on `name` (from the audit log)."""
    return sum(1 for entry in AuditLog(project.runs_dir).entries() if entry["label"] == f"inspect {name}")


async def open_timed(project: Project, sandbox: Sandbox, timeout_s: float) -> tuple[Catalog, float]:
    started = time.perf_counter()
    catalog = await Catalog.open(project, sandbox, inspect_timeout_s=timeout_s, test_timeout_s=1)
    return catalog, time.perf_counter() - started


async def test_a_hanging_tool_pays_its_timeout_once(repo: Path) -> None:
    project = Project.at(repo)
    project.ensure_layout()
    project.tool_path("hangs").write_text(HANGS)
    project.tool_path("good").write_text(tool_source("good"))
    sandbox = await Sandbox.start(project, warm_workers=1)
    try:
        first, first_s = await open_timed(project, sandbox, 1.0)
        error = first.get("hangs").error
        assert first.load_report.broken == ["hangs"] and first.load_report.cached_broken == []
        assert error is not None and "did not finish within 1 s" in error.message and first_s >= 1.0
        await first.aclose()
        assert inspections(project, "hangs") == 1

        second, second_s = await open_timed(project, sandbox, 1.0)
        assert second.load_report.broken == ["hangs"] and second.load_report.cached_broken == ["hangs"]
        assert second.load_report.cached == ["good"]
        record = second.get("hangs")
        assert record is not None and record.status == "broken" and record.error == error
        assert inspections(project, "hangs") == 1  # not run again
        assert second_s < 0.9, second_s
        await second.aclose()

        # a longer timeout might let it through: the recorded failure no longer stands
        third, third_s = await open_timed(project, sandbox, 1.5)
        assert third.load_report.cached_broken == [] and inspections(project, "hangs") == 2 and third_s >= 1.5
        assert "within 1.5 s" in third.get("hangs").error.message
        await third.aclose()

        # fixed on disk: new bytes, validated afresh
        project.tool_path("hangs").write_text(tool_source("hangs"))
        fourth, _ = await open_timed(project, sandbox, 1.5)
        assert fourth.load_report.validated == ["hangs"] and fourth.get("hangs").error is None
        await fourth.aclose()
    finally:
        await sandbox.aclose()


async def test_a_failing_test_is_remembered_for_those_bytes_and_that_name(repo: Path) -> None:
    project = Project.at(repo)
    project.ensure_layout()
    failing = tool_source("flaky", test="assert flaky(2) == 5") + OTHER
    project.tool_path("flaky").write_text(failing)
    sandbox = await Sandbox.start(project, warm_workers=1)
    try:
        first, _ = await open_timed(project, sandbox, 5)
        error = first.get("flaky").error
        assert error is not None and error.stage == "tests" and error.details["tests"][0]["name"] == "test_flaky"
        await first.aclose()
        second, _ = await open_timed(project, sandbox, 5)
        assert second.load_report.cached_broken == ["flaky"] and second.get("flaky").error == error
        assert inspections(project, "flaky") == 2, "a failing test runs twice before its failure is cached"
        await second.aclose()
        # the same bytes as another tool are validated for that name, not taken from the cache
        project.tool_path("flaky").rename(project.tool_path("other"))
        third, _ = await open_timed(project, sandbox, 5)
        assert third.load_report.cached_broken == [] and inspections(project, "other") == 2
        assert third.get("other").error.stage == "tests"
        await third.aclose()
    finally:
        await sandbox.aclose()


def flips_source(counter: Path) -> str:
    """A tool whose test fails on its first run and passes afterwards (a counter file outside the project)."""
    return tool_source("flips", test=f"import pathlib; marker = pathlib.Path({str(counter)!r}); first = not marker.exists(); "
                                     "marker.write_text('ran'); assert not first, 'fails the first time only'")


async def test_a_flaky_tests_first_failure_is_not_cached_as_final(repo: Path, tmp_path: Path) -> None:
    project = Project.at(repo)
    project.ensure_layout()
    counter = tmp_path / "flips-ran"
    project.tool_path("flips").write_text(flips_source(counter))
    sandbox = await Sandbox.start(project, tier="rlimits", warm_workers=0)  # rlimits: the counter file persists
    try:
        first, _ = await open_timed(project, sandbox, 10)
        assert first.get("flips").error is None and first.get("flips").status in ("ok", "unused")
        assert inspections(project, "flips") == 2
        sha = source_sha(project.tool_path("flips").read_bytes())
        assert first.state.cached_validation(sha, INSPECTOR_VERSION) is None, "neither outcome is final"
        await first.aclose()
        counter.unlink()  # fails first again: the next load tests again instead of trusting a cache
        second, _ = await open_timed(project, sandbox, 10)
        assert second.load_report.validated == ["flips"] and second.get("flips").error is None
        assert inspections(project, "flips") == 4
        await second.aclose()
    finally:
        await sandbox.aclose()
