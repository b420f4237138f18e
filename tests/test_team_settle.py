"""Hand edits commit once they settle: one commit for a burst of saves, under the person's name, nothing lost."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from tests.catalog_support import opened_catalog, started_sandbox, subjects, tool_source, wait_for
from tests.gitrepo import git


async def test_a_burst_of_editor_saves_makes_one_commit_under_the_persons_name(repo: Path) -> None:
    async with started_sandbox(repo) as box, opened_catalog(repo, box) as catalog:
        await catalog.save("double", tool_source("double"))
        commits = len(subjects(repo))
        watch = asyncio.create_task(catalog.watch())
        try:
            await wait_for(lambda: catalog.watcher is not None and catalog.watcher.ready.is_set())
            path = catalog.project.tool_path("double")
            for n in range(1, 9):  # an editor saving every 150 ms
                path.write_text(tool_source("double", f"return 2 * x + {n}"))
                await asyncio.sleep(0.15)
            await wait_for(lambda: catalog.get("double").spec.source_sha
                           == catalog.registry.get("double").disk_sha, timeout=10)
            await wait_for(lambda: len(subjects(repo)) > commits, timeout=15)
            settled = time.monotonic()
            await asyncio.sleep(catalog.settle.settle_s + 1.0)
            assert len(subjects(repo)) == commits + 1, subjects(repo)[:4]  # one commit for the whole burst
            assert time.monotonic() - settled >= catalog.settle.settle_s
            assert subjects(repo)[0] == "tuiagent: update tool double (edited outside tuiagent)"
            assert git(repo, "log", "-1", "--format=%an <%ae>").strip() == "Dev <dev@example.com>"
            assert "return 2 * x + 8" in git(repo, "show", "HEAD:.agent/tools/double.py")
            assert catalog.get("double").commit == git(repo, "rev-parse", "HEAD").strip()
        finally:
            watch.cancel()
            await asyncio.gather(watch, return_exceptions=True)


async def test_a_settling_edit_is_not_lost_when_the_process_never_commits_it(repo: Path) -> None:
    async with started_sandbox(repo) as box:
        async with opened_catalog(repo, box) as first:
            await first.save("double", tool_source("double"))
            first.project.tool_path("double").write_text(tool_source("double", "return x + x"))
            assert await first.outside_edit({"double"}) == ["double"]
            assert first.settle.waiting() == ["double"]
            head = git(repo, "rev-parse", "HEAD")
            # the process dies here (no timer fires, no close): another one starts on the project
            first.settle.forget("double")
            async with opened_catalog(repo, box) as second:
                assert git(repo, "rev-parse", "HEAD") != head
                assert "return x + x" in git(repo, "show", "HEAD:.agent/tools/double.py")
                assert second.get("double").status == "unused"


async def test_a_revert_first_commits_the_settling_hand_edit(repo: Path) -> None:
    async with started_sandbox(repo) as box, opened_catalog(repo, box) as catalog:
        await catalog.save("double", tool_source("double"))
        catalog.project.tool_path("double").write_text(tool_source("double", "return x + x"))
        await catalog.outside_edit({"double"})
        await catalog.revert("double")
        assert subjects(repo)[:2] == ["tuiagent: revert tool double to " + subjects(repo)[0].rsplit(" ", 1)[1],
                                      "tuiagent: update tool double (edited outside tuiagent)"]
        assert "return 2 * x" in catalog.project.tool_path("double").read_text()
