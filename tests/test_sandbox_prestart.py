"""`Sandbox.start(prestart=False)` starts no warm worker until `prestart()` (the TUI's, once a prompt
typed at first paint has reached the model); runs work either way."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

from tests.gitrepo import init_repo
from tests.procs import processes
from tui_agent.core.project import Project
from tui_agent.core.sandbox import Sandbox
from tui_agent.core.sandbox import Snippet


def children() -> list[int]:
    """This process's live child processes (from /proc)."""
    return [pid for pid, state, parent, _group in processes() if parent == os.getpid() and state != "Z"]


async def test_prestart_waits_for_its_call(tmp_path: Path) -> None:
    project = Project.at(init_repo(tmp_path / "project"))
    before = set(children())
    box = await Sandbox.start(project, prestart=False)
    try:
        await asyncio.sleep(0.5)
        assert set(children()) - before == set()  # nothing started
        box.prestart()
        deadline = time.monotonic() + 20
        while len(set(children()) - before) < 2 and time.monotonic() < deadline:  # warm workers: read-only and writable
            await asyncio.sleep(0.05)
        assert len(set(children()) - before) >= 2
        box.prestart()  # once only
        result = await box.run(Snippet("1 + 1"))
        assert result.ok and result.value == 2, result
    finally:
        await box.aclose()
