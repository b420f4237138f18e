"""The app at 80×24: the run form's fields and buttons reachable, header and footer keep what matters (pilot + snapshots)."""

from __future__ import annotations

import asyncio
import re
import shutil
from pathlib import Path

import pytest

from tui_agent.ui.context_usage import UsageFigures
from tests.gitrepo import init_repo
from tests.ui_support import make_app, ready, row_names, wait_until
from tui_agent.core.agent.permissions import deny_all
from tui_agent.core.runtime import open_runtime
from tui_agent.ui.screens.argument_form import ArgumentFormScreen
from tui_agent.core.runtime_state import catalog_of

SMALL = (80, 24)
THREE_ARGUMENTS = '''
def find_slow(path: str, threshold_ms: int = 100, limit: int = 20) -> list[str]:
    """Find slow tests in a pytest report.

    Args:
        path: the report file, relative to the project
        threshold_ms: a test slower than this many milliseconds is slow
        limit: at most this many tests
    """
    return [path][:limit]
'''


@pytest.fixture(autouse=True)
def no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


async def add_tool(repo: Path) -> None:
    runtime = await open_runtime(repo, approve=deny_all, sandbox_tier="rlimits")
    try:
        await catalog_of(runtime).save("find_slow", THREE_ARGUMENTS)
    finally:
        await runtime.aclose()


@pytest.fixture(scope="module")
def project_with_a_tool(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository whose catalog holds find_slow, made once (through a runtime) for the module's tests to copy."""
    repo = init_repo(tmp_path_factory.mktemp("small-terminal") / "project")
    asyncio.run(add_tool(repo))
    return repo


@pytest.fixture
def project(tmp_path: Path, project_with_a_tool: Path) -> Path:
    """This test's own copy of the repository (git and all)."""
    return Path(shutil.copytree(project_with_a_tool, tmp_path / "project", symlinks=True))


def steady_cursors(app) -> None:  # type: ignore[no-untyped-def]
    """A blinking cursor would make the snapshot depend on timing."""
    for screen in app.screen_stack:
        for widget in screen.query("Input, TextArea"):
            widget.cursor_blink = False


def on_screen(app, selector: str) -> bool:  # type: ignore[no-untyped-def]
    widget = app.screen.query_one(selector)
    region = widget.region
    return region.area > 0 and region.y >= 0 and region.bottom <= app.size.height


async def open_run_form(pilot) -> ArgumentFormScreen:  # type: ignore[no-untyped-def]
    app = await ready(pilot)
    await wait_until(pilot, lambda: row_names(app) == ["find_slow"], message="the tool")
    await pilot.press("f3", "r")
    await wait_until(pilot, lambda: isinstance(app.screen, ArgumentFormScreen), message="the run form")
    await pilot.pause(0.1)
    assert isinstance(app.screen, ArgumentFormScreen)
    return app.screen


async def test_the_run_form_at_80x24_keeps_buttons_visible_and_tab_reaches_every_field(project: Path) -> None:
    app = make_app(project, sandbox_tier="rlimits", watch_catalog=False)
    async with app.run_test(size=SMALL) as pilot:
        form = await open_run_form(pilot)
        assert on_screen(app, "#run") and on_screen(app, "#cancel")
        for name in ("path", "threshold_ms", "limit"):
            assert form.focused is form.query_one(f"#arg-{name}")
            await pilot.pause(0.1)
            assert on_screen(app, f"#arg-{name}"), name
            await pilot.press("tab")
        assert form.focused is form.query_one("#run")
        form.query_one("#arg-path").value = "report.xml"  # type: ignore[attr-defined]
        await pilot.press("enter")
        await wait_until(pilot, lambda: not isinstance(app.screen, ArgumentFormScreen), message="the run")


def test_run_form_at_80x24_snapshot(project: Path, snap_compare) -> None:  # type: ignore[no-untyped-def]
    async def before(pilot) -> None:  # type: ignore[no-untyped-def]
        await open_run_form(pilot)
        steady_cursors(pilot.app)
        await pilot.pause(0.1)

    assert snap_compare(make_app(project, sandbox_tier="rlimits", watch_catalog=False), terminal_size=SMALL, run_before=before)


def test_narrow_layout_80x24_snapshot(project: Path, snap_compare) -> None:  # type: ignore[no-untyped-def]
    async def before(pilot) -> None:  # type: ignore[no-untyped-def]
        app = await ready(pilot)
        await wait_until(pilot, lambda: app.header.branch == "main" and row_names(app) == ["find_slow"], message="branch and catalog")
        app.usage = UsageFigures(12_400, 3_100, 0.0873)
        steady_cursors(app)
        await pilot.pause(0.2)

    assert snap_compare(make_app(project, sandbox_tier="rlimits", watch_catalog=False), terminal_size=SMALL, run_before=before)


async def test_at_80_columns_the_header_keeps_tokens_and_cost_and_the_footer_every_catalog_key(project: Path) -> None:
    app = make_app(project, sandbox_tier="rlimits", watch_catalog=False)
    async with app.run_test(size=SMALL) as pilot:
        await ready(pilot)
        await wait_until(pilot, lambda: app.header.branch == "main", message="the branch")
        app.usage, app.busy = UsageFigures(12_400, 3_100, 0.0873), True
        await pilot.pause(0.1)
        line = app.header.render().plain
        assert len(line) <= 80 and "12.4k" in line and "3.1k" in line and "$0.0873" in line and "main" in line and "rlimits" in line
        await pilot.press("f3")
        await pilot.pause(0.2)
        footer = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", app.export_screenshot().replace("&#160;", " ")))
        for key in ("v View", "r Run", "d Prune", "u Revert", "h History", "f Drift", "p Pruned", "/ Filter"):
            assert key in footer, key


async def test_at_80_columns_a_busy_read_only_header_keeps_its_mode_context_and_busy_mark(project: Path) -> None:
    app = make_app(project, sandbox_tier="bubblewrap", watch_catalog=False)
    async with app.run_test(size=SMALL) as pilot:
        await ready(pilot)
        app.model, app.branch, app.sandbox_tier = "claude-sonnet-5-5", "feature/parser", "bubblewrap"
        app.permission_mode, app.busy = "read-only", True
        app.usage = UsageFigures(129_300, 10_910, 12.0405, context_percent=42)
        await pilot.pause(0.1)
        line = app.header.render().plain
        assert len(line) <= 80, line
        for shown in ("read-only", "129.3k↑", "$12.0405", "42% ctx", "● esc", "sonnet-5-5"):
            assert shown in line, (shown, line)


async def test_at_80_columns_a_cut_summary_ends_with_an_ellipsis(project: Path) -> None:
    app = make_app(project, sandbox_tier="rlimits", watch_catalog=False)
    async with app.run_test(size=SMALL) as pilot:
        await ready(pilot)
        await wait_until(pilot, lambda: row_names(app) == ["find_slow"], message="the catalog")
        await pilot.press("f3")
        await pilot.pause(0.2)
        screen = re.sub(r"<[^>]+>", "", app.export_screenshot().replace("&#160;", " "))
        shown = re.search(r"Find slow tests[^│\n]*", screen)
        assert shown is not None and "Find slow tests in a pytest report." not in screen, screen
        assert shown.group().rstrip().endswith("…"), shown.group()  # the person can tell there is more (v shows it)


async def test_at_80_columns_the_pruned_views_title_keeps_its_keys_and_sort_whole(project: Path) -> None:
    from tests.ui_support import answer_confirm

    app = make_app(project, sandbox_tier="rlimits", watch_catalog=False)
    async with app.run_test(size=SMALL) as pilot:
        await ready(pilot)
        await wait_until(pilot, lambda: row_names(app) == ["find_slow"], message="the catalog")
        await pilot.press("f3", "d")
        await answer_confirm(pilot)
        await wait_until(pilot, lambda: row_names(app) == [], message="the tool pruned")
        await pilot.press("p")
        await wait_until(pilot, lambda: row_names(app) == ["find_slow"], message="the pruned view")
        title = app.catalog_pane.query_one("#catalog-title")
        shown = str(title.render())
        assert "(enter/r restores, p back)" in shown and "sort: " in shown, shown
        assert len(shown) <= title.content_region.width, (shown, title.content_region.width)
