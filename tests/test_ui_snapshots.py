"""Snapshot tests (pytest-textual-snapshot) of the main screen, the catalog, the diff view and the approval modal.

Deterministic by construction: fixed terminal sizes, the rlimits sandbox tier forced (the same on every machine), no model,
tools that were never called (no "last use" times), and no commit ids on screen.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from tests.gitrepo import init_repo
from tests.ui_support import make_app, ready, row_names, tool_source, wait_until
from tui_agent.core.agent.permissions import ApprovalRequest, deny_all
from tui_agent.core.runtime import open_runtime
from tui_agent.ui.screens.approval import ApprovalScreen
from tui_agent.core.runtime_state import catalog_of

DIFF = """\
diff --git a/.agent/tools/grep_name.py b/.agent/tools/grep_name.py
index 3b18e51..a9c2f4d 100644
--- a/.agent/tools/grep_name.py
+++ b/.agent/tools/grep_name.py
@@ -1,12 +1,14 @@
 import subprocess
 
 
-def grep_name(name: str) -> list[str]:
+def grep_name(name: str, limit: int = 50) -> list[str]:
     \"\"\"Find where a name is used.
 
     Args:
         name: the identifier
+        limit: at most this many hits
     \"\"\"
-    out = subprocess.run(["git", "grep", "-n", name], capture_output=True, text=True).stdout
-    return out.splitlines()
+    out = subprocess.run(["git", "grep", "-n", "-w", name], capture_output=True, text=True).stdout
+    return out.splitlines()[:limit]
"""

BROKEN = "def bad_tool(x: int) -> int:\n    return (x\n"


@pytest.fixture(autouse=True)
def no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


async def add_tools(repo: Path) -> None:
    runtime = await open_runtime(repo, approve=deny_all, sandbox_tier="rlimits")
    try:
        await catalog_of(runtime).save("double", tool_source("double"))
        await catalog_of(runtime).save("grep_name", tool_source("grep_name", "return x", summary="Find where a name is used in the project."))
        await catalog_of(runtime).save("sort_by_time", tool_source("sort_by_time", "return x", summary="Sort trace files by their modification time."))
    finally:
        await runtime.aclose()
    (repo / ".agent" / "tools" / "bad_tool.py").write_text(BROKEN)


@pytest.fixture(scope="module")
def project_with_tools(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The repository with its four tools, made once (through a runtime) for the module's tests to copy."""
    repo = init_repo(tmp_path_factory.mktemp("snapshots") / "project")
    asyncio.run(add_tools(repo))
    return repo


@pytest.fixture
def project(tmp_path: Path, project_with_tools: Path) -> Path:
    """This test's own copy of the repository (git and all)."""
    return Path(shutil.copytree(project_with_tools, tmp_path / "project", symlinks=True))


async def settled(pilot) -> None:  # type: ignore[no-untyped-def]
    app = await ready(pilot)
    app.prompt_area.cursor_blink = False  # a blinking cursor is caught on or off by chance when the machine is slow
    await wait_until(pilot, lambda: app.header.branch == "main" and len(row_names(app)) == 4, message="branch and catalog")
    await pilot.pause(0.2)


def test_main_screen(project: Path, snap_compare) -> None:  # type: ignore[no-untyped-def]
    async def before(pilot) -> None:  # type: ignore[no-untyped-def]
        await settled(pilot)
        pilot.app.prompt_area.insert("/tools")
        await pilot.press("enter")
        await pilot.pause(0.2)
        pilot.app.action_show_pane("conversation")
        pilot.app.prompt_area.insert("Find the flaky recipe runs")
        await pilot.pause(0.1)

    assert snap_compare(make_app(project, sandbox_tier="rlimits", watch_catalog=False), terminal_size=(160, 44), run_before=before)


def test_catalog_narrow_sorted_by_status(project: Path, snap_compare) -> None:  # type: ignore[no-untyped-def]
    async def before(pilot) -> None:  # type: ignore[no-untyped-def]
        await settled(pilot)
        await pilot.press("f3", "s")
        await pilot.pause(0.1)

    assert snap_compare(make_app(project, sandbox_tier="rlimits", watch_catalog=False), terminal_size=(100, 24), run_before=before)


def test_diff_view_side_by_side(project: Path, snap_compare) -> None:  # type: ignore[no-untyped-def]
    async def before(pilot) -> None:  # type: ignore[no-untyped-def]
        await settled(pilot)
        pilot.app.diff_pane.show("grep_name: previous version → current", DIFF, subject="grep_name")
        await pilot.press("f4", "m")
        await pilot.pause(0.1)

    assert snap_compare(make_app(project, sandbox_tier="rlimits", watch_catalog=False), terminal_size=(110, 30), run_before=before)


def test_approval_modal(project: Path, snap_compare) -> None:  # type: ignore[no-untyped-def]
    async def before(pilot) -> None:  # type: ignore[no-untyped-def]
        await settled(pilot)
        command = "pytest -q tests/test_flaky.py -k 'recipe and not slow'"
        request = ApprovalRequest("shell", "run_shell", "run `pytest -q tests/test_flaky.py` (no network)", command, subject=command)
        pilot.app.run_worker(pilot.app.turns.approve(request))
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, ApprovalScreen), message="the modal")
        await pilot.wait_for_scheduled_animations()
        await pilot.pause(0.3)

    assert snap_compare(make_app(project, sandbox_tier="rlimits", watch_catalog=False), terminal_size=(120, 36), run_before=before)
