"""A forked run whose caller is cancelled (a task cancel, as an MCP client's notifications/cancelled does) leaves
the fork server that serves the next runs able to fork them at once."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from tui_agent.core.project import Project
from tui_agent.core.sandbox import Sandbox, SandboxPolicy
from tui_agent.core.sandbox.stopping import kill_base
from tui_agent.core.sandbox.launch import probe_bubblewrap
from tui_agent.core.sandbox import Snippet

pytestmark = pytest.mark.skipif(probe_bubblewrap() is not None or kill_base() is None,
                                reason="fork servers need bubblewrap and per-run cgroups with cgroup.kill")
READ_ONLY = SandboxPolicy(project_writable=False)


async def test_runs_after_a_cancelled_forked_run_are_prompt(repo: Path) -> None:
    project = Project.at(repo)
    project.ensure_layout()
    box = await Sandbox.start(project, warm_workers=0)
    try:
        await asyncio.gather(box.run(Snippet("1"), READ_ONLY), box.run(Snippet("2"), READ_ONLY))  # two servers
        slow = asyncio.ensure_future(box.run(Snippet("import time\ntime.sleep(60)"), READ_ONLY))
        await asyncio.sleep(1.0)
        slow.cancel()
        with pytest.raises(asyncio.CancelledError):
            await slow
        for run in range(8):
            started = time.perf_counter()
            result = await asyncio.wait_for(box.run(Snippet("6 * 7"), READ_ONLY), 40)
            assert result.ok and result.value == 42, result
            took = time.perf_counter() - started
            assert took < 3.0, f"run {run + 1} after the cancelled one took {took:.2f} s"
    finally:
        await box.aclose()
