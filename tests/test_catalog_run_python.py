"""`Catalog.run_python`: snippets import each tool at the version the catalog serves, even when its file is broken."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.catalog_support import tool_source
from tui_agent.core.catalog.api import Catalog
from tui_agent.core.project import Project
from tui_agent.core.sandbox import Sandbox
from tui_agent.core.sandbox import Snippet


@pytest.mark.parametrize("tier", ["bubblewrap", "rlimits"])
async def test_broken_file_on_disk_last_good_version_importable(repo: Path, tier: str) -> None:
    project = Project.at(repo)
    sandbox = await Sandbox.start(project, tier=tier, warm_workers=1)
    catalog = await Catalog.open(project, sandbox, inspect_timeout_s=10, test_timeout_s=5)
    try:
        await catalog.save("double", tool_source("double"))
        await catalog.save("triple", tool_source("triple", "return 3 * x"))
        project.tool_path("double").write_text("def double(x: int) -> int:\n    '''Broken.'''\n    return (x\n")
        assert await catalog.outside_edit({"double"}) == ["double"]
        record = catalog.get("double")
        assert record is not None and record.status == "broken" and record.spec is not None

        snippet = "import double, triple\n[double.double(n) + triple.triple(n) for n in range(3)]"
        result = await catalog.run_python(snippet)
        assert result.ok, result.error
        assert result.value == [0, 5, 10]

        on_disk = await sandbox.run(Snippet(snippet))  # what the snippet would have got from .agent/tools/
        assert not on_disk.ok and "SyntaxError" in on_disk.error

        for runnable in (project.cache_dir / "tools").glob("*.py"):  # cleared cache: rebuilt from git
            runnable.unlink()
        again = await catalog.run_python(snippet)
        assert again.ok and again.value == [0, 5, 10]
    finally:
        await catalog.aclose()
        await sandbox.aclose()
