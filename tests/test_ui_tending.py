"""The catalog pane's suggested rows (a authors, x dismisses), the care view (c) and repair (R), with a real runtime."""

from __future__ import annotations

from pathlib import Path

from tests.tending_sessions import flaky_workflow, write_session
from tests.ui_support import make_app, ready, tool_source, wait_until
from tui_agent.core.project import Project
from tui_agent.ui.screens.catalog_care import CatalogCareScreen
from tui_agent.core.runtime_state import catalog_of


def suggested(app: object) -> list[str]:
    return [row.summary for row in app.catalog_pane.shown if row.kind == "suggestion"]  # type: ignore[attr-defined]


async def test_a_suggested_row_is_listed_and_x_dismisses_it_for_good(repo: Path) -> None:
    project = Project.at(repo)
    write_session(project, [flaky_workflow("test_pay")])
    write_session(project, [flaky_workflow("test_refund")])
    app = make_app(repo)
    async with app.run_test(size=(160, 40)) as pilot:
        await ready(pilot)
        app.schedule_catalog_refresh()
        await wait_until(pilot, lambda: bool(suggested(app)), message="a suggested row")
        assert "query_traces → grep → run_shell → run_shell ran 2×" in suggested(app)[0]
        row = next(row for row in app.catalog_pane.shown if row.kind == "suggestion")
        await pilot.press("f3")
        app.catalog_pane.select(row.name)
        await pilot.press("x")
        await wait_until(pilot, lambda: not suggested(app), message="the suggestion dismissed")
        assert catalog_of(app.runtime).state.suggestions()[row.name][0] == "dismissed"


async def test_the_care_view_lists_suggestions_and_doctor_findings(repo: Path) -> None:
    project = Project.at(repo)
    write_session(project, [flaky_workflow("test_pay")])
    write_session(project, [flaky_workflow("test_refund")])
    app = make_app(repo)
    async with app.run_test(size=(160, 40)) as pilot:
        await ready(pilot)
        await catalog_of(app.runtime).save("double", tool_source("double"))
        await pilot.press("f3", "c")
        await wait_until(pilot, lambda: isinstance(app.screen, CatalogCareScreen), message="the care view")
        report = app.screen.report  # type: ignore[attr-defined]
        assert len(report.suggestions) == 1
        assert ("never-called", ("double",)) in {(finding.kind, finding.tools) for finding in report.findings}
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, CatalogCareScreen), message="the care view closed")
