"""Modes of the files tuiagent writes: a new file follows the umask (not mkstemp's 0600), an update keeps the mode
the file had; for write_file and for the tool files the catalog writes."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.catalog_support import opened_catalog, started_sandbox, tool_source
from tui_agent.core.agent.file_tools import write_file
from tui_agent.core.agent.permissions import Permissions, approve_all
from tui_agent.core.agent.toolbase import ToolContext
from tui_agent.core.project import Project


@pytest.fixture
def umask_022() -> Iterator[None]:
    before = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(before)


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


async def test_write_file_follows_the_umask_and_an_update_keeps_the_mode(repo: Path, umask_022: None) -> None:
    ctx = ToolContext(Project.at(repo), Permissions("auto", approve_all), call_id="c1", tool_name="write_file")
    await write_file(ctx, {"path": "new.txt", "content": "new\n"})
    assert mode(repo / "new.txt") == 0o644
    os.chmod(repo / "app.py", 0o750)
    await write_file(ctx, {"path": "app.py", "content": "print('changed')\n"})
    assert mode(repo / "app.py") == 0o750 and (repo / "app.py").read_text() == "print('changed')\n"


async def test_tool_files_follow_the_umask_and_an_update_keeps_the_mode(repo: Path, umask_022: None) -> None:
    async with started_sandbox(repo) as box, opened_catalog(repo, box) as catalog:
        await catalog.save("double", tool_source("double"))
        path = Project.at(repo).tool_path("double")
        assert mode(path) == 0o644
        os.chmod(path, 0o664)
        await catalog.save("double", tool_source("double", "return x + x"))
        assert mode(path) == 0o664 and "x + x" in path.read_text()
