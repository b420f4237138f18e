"""Hot reload: outside edits are revalidated, broken edits keep the last good version live, deletes unregister, own writes don't loop."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.catalog_support import head, subjects, tool_source, wait_for
from tests.gitrepo import user_state
from tui_agent.core.catalog.api import Catalog
from tui_agent.core.catalog.toolfile import source_sha
from tui_agent.core.project import Project
from tui_agent.core.sandbox import Sandbox


async def test_hot_reload(dirty_repo: Path) -> None:
    project = Project.at(dirty_repo)
    sandbox = await Sandbox.start(project, warm_workers=1)
    catalog = await Catalog.open(project, sandbox, inspect_timeout_s=10)
    reasons: list[str] = []
    catalog.add_listener(lambda event: reasons.append(event.reason))
    await catalog.save("double", tool_source("double"))
    before = user_state(dirty_repo)
    watch = asyncio.create_task(catalog.watch())
    try:
        await wait_for(lambda: catalog.watcher is not None and catalog.watcher.ready.is_set())
        path = project.tool_path("double")

        edited = tool_source("double", "return x + x")
        path.write_text(edited)
        await wait_for(lambda: catalog.registry.get("double").spec.source_sha == source_sha(edited.encode()))
        await wait_for(lambda: subjects(dirty_repo)[0] == "tuiagent: update tool double (edited outside tuiagent)")
        assert (await catalog.call_tool("double", {"x": 4})).value == 8

        committed = head(dirty_repo)
        path.write_text(edited.replace("return x + x", "return x +"))
        await wait_for(lambda: catalog.get("double").status == "broken")
        record = catalog.get("double")
        assert record.error.stage == "parse" and record.error.line == 8
        assert (await catalog.call_tool("double", {"x": 5})).value == 10  # last good version stays callable
        assert head(dirty_repo) == committed

        path.write_text(tool_source("double", "return 2 * x + 1"))
        await wait_for(lambda: catalog.get("double").status != "broken")
        assert (await catalog.call_tool("double", {"x": 5})).value == 11

        project.tool_path("fresh").write_text(tool_source("fresh", "return -x"))
        await wait_for(lambda: catalog.get("fresh") is not None)
        # its commit too, which may come after it is callable: else it lands among the commits counted below
        await wait_for(lambda: subjects(dirty_repo)[0] == "tuiagent: add tool fresh (edited outside tuiagent)")
        assert (await catalog.call_tool("fresh", {"x": 5})).value == -5

        reasons.clear()
        path.unlink()
        await wait_for(lambda: catalog.get("double") is None)
        await wait_for(lambda: subjects(dirty_repo)[0] == "tuiagent: remove tool double (file deleted outside tuiagent)")
        await wait_for(lambda: reasons == ["edited outside tuiagent"])

        commits_before = len(subjects(dirty_repo))
        reasons.clear()
        await catalog.save("triple", tool_source("triple", "return 3 * x"))
        await catalog.save("triple", tool_source("triple", "return x * 3"))
        await asyncio.sleep(0.8)  # give any echo of our own writes time to arrive
        assert len(subjects(dirty_repo)) == commits_before + 2
        assert reasons == ["add", "update"]
        assert await catalog.outside_edit({"triple"}) == []
        assert user_state(dirty_repo) == before
    finally:
        watch.cancel()
        await asyncio.gather(watch, return_exceptions=True)
        await catalog.aclose()
        await sandbox.aclose()
    assert not (project.tools_dir / ".tuiagent-watch-probe").exists()


async def test_last_good_copy_is_recovered_when_the_cache_is_cleared(repo: Path) -> None:
    import shutil

    project = Project.at(repo)
    sandbox = await Sandbox.start(project, warm_workers=1)
    catalog = await Catalog.open(project, sandbox)
    try:
        await catalog.save("double", tool_source("double"))
        project.tool_path("double").write_text("broken(\n")
        assert await catalog.outside_edit({"double"}) == ["double"]
        shutil.rmtree(project.cache_dir / "tools")
        assert (await catalog.call_tool("double", {"x": 7})).value == 14  # rebuilt from the commit, not the broken file
    finally:
        await catalog.aclose()
        await sandbox.aclose()
