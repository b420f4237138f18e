"""Pilot tests of what the catalog pane says: live drift, an untracked dependency, broken tools with their line."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tests.ui_support import make_app, ready, tool_source, wait_until
from tui_agent.core.runtime_state import catalog_of

DEPENDS = '''
DEPENDS_ON = ["data/*.txt"]


def limit() -> int:
    """Read the limit from data/limit.txt."""
    return int(open("data/limit.txt").read())
'''


@pytest.fixture(autouse=True)
def no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def status_of(app, name: str) -> str:  # type: ignore[no-untyped-def]
    return next((row.status for row in app.catalog_pane.rows if row.name == name), "")


async def test_an_edited_dependency_shows_drifted_without_pressing_f(repo: Path) -> None:
    limit_file = repo / "data" / "limit.txt"
    limit_file.parent.mkdir()
    limit_file.write_text("10\n")
    os.utime(limit_file, (time.time() - 60, time.time() - 60))  # untracked, and older than the tool
    app = make_app(repo)
    async with app.run_test(size=(160, 40)) as pilot:
        await ready(pilot)
        await catalog_of(app.runtime).save("limit", DEPENDS)
        await wait_until(pilot, lambda: status_of(app, "limit") == "unused", message="the new tool, not drifted")
        await pilot.pause(0.5)
        assert status_of(app, "limit") == "unused"
        limit_file.write_text("12\n")
        future = time.time() + 5
        os.utime(limit_file, (future, future))
        await wait_until(pilot, lambda: status_of(app, "limit") == "drifted", timeout=10, message="drifted, live")


async def test_a_broken_tool_shows_its_line_and_drift_does_not_claim_its_tests_pass(repo: Path) -> None:
    app = make_app(repo)
    async with app.run_test(size=(160, 40)) as pilot:
        await ready(pilot)
        await catalog_of(app.runtime).save("double", tool_source("double"))
        (repo / ".agent" / "tools" / "double.py").write_text("def double(x: int) -> int:\n    return (x\n")
        await wait_until(pilot, lambda: status_of(app, "double") == "broken", message="the broken status")
        row = next(row for row in app.catalog_pane.rows if row.name == "double")
        assert row.summary.startswith("parse: ") and "(line 2)" in row.summary
        app.action_show_pane("catalog")
        assert app.catalog_pane.select("double")
        await pilot.press("f")
        await wait_until(pilot, lambda: "double" in app.diff_pane.title, message="the drift report")
        assert "its tests pass" not in app.diff_pane.title
        assert "the file is broken (parse: " in app.diff_pane.title and "last good version's tests: pass" in app.diff_pane.title
