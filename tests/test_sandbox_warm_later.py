"""An opening app starts the sandbox without waiting for its warm workers (`warm_later`): runs work at once, and a
sandbox closed while they are still starting leaves no process and no folder behind."""

from __future__ import annotations

import os
from pathlib import Path

from tui_agent.core.project import Project
from tui_agent.core.sandbox import Sandbox


def descendants() -> set[int]:
    """Processes whose parent chain leads to this test process."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat[stat.rfind(")") + 2:].split()[1])
    found: set[int] = set()
    for pid in parents:
        current = pid
        while current in parents and current > 1:
            current = parents[current]
            if current == os.getpid():
                found.add(pid)
                break
    return found


async def test_a_run_right_after_a_warm_later_start_works(repo: Path) -> None:
    box = await Sandbox.start(Project.at(repo), warm_later=True)
    try:
        result = await box.run_python("print(6 * 7)")
        assert result.ok and "42" in result.stdout, result
    finally:
        await box.aclose()


async def test_closed_while_its_workers_start_it_leaves_no_process_or_folder(repo: Path) -> None:
    before = descendants()
    box = await Sandbox.start(Project.at(repo), warm_later=True)
    scratch = box._scratch
    await box.aclose()
    assert not scratch.exists()
    leftover = descendants() - before
    assert not leftover, [Path(f"/proc/{pid}/cmdline").read_bytes()[:200] for pid in leftover]
