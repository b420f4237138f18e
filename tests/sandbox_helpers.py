"""A bubblewrap sandbox whose writable runs go through an overlay and the harvest (or without one), for the tests of what a
run leaves."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tui_agent.core.project import Project
from tui_agent.core.sandbox import Sandbox
from tui_agent.core.sandbox.launch import probe_bubblewrap


@contextlib.asynccontextmanager
async def bubblewrap_sandbox(repo: Path, *, overlay: bool = True) -> AsyncIterator[Sandbox]:
    """A bubblewrap sandbox on `repo` (no warm workers) whose writable runs use the overlay (the test is skipped
    without one), or, `overlay` False, go without one (the path of kernels that refuse one)."""
    if probe_bubblewrap() is not None:
        pytest.skip("bubblewrap is not usable here")
    sandbox = await Sandbox.start(Project.at(repo), tier="bubblewrap", warm_workers=0)
    try:
        if not overlay:
            sandbox.runs.overlay_problem = "forced off for this test"
        elif sandbox.runs.overlay_problem is not None:
            pytest.skip(sandbox.runs.overlay_problem)
        yield sandbox
    finally:
        await sandbox.aclose()
