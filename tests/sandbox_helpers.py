"""A bubblewrap sandbox whose writable runs go through an overlay and the harvest, for the tests of what a run leaves."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tui_agent.core.project import Project
from tui_agent.core.sandbox import Sandbox
from tui_agent.core.sandbox.launch import probe_bubblewrap


@contextlib.asynccontextmanager
async def overlay_sandbox(repo: Path) -> AsyncIterator[Sandbox]:
    """A sandbox on `repo` (no warm workers) whose writable runs use the overlay; the test is skipped without one."""
    if probe_bubblewrap() is not None:
        pytest.skip("bubblewrap is not usable here")
    project = Project.at(repo)
    project.ensure_layout()
    sandbox = await Sandbox.start(project, tier="bubblewrap", warm_workers=0)
    if sandbox.runs.overlay_problem is not None:
        await sandbox.aclose()
        pytest.skip(sandbox.runs.overlay_problem)
    try:
        yield sandbox
    finally:
        await sandbox.aclose()
