"""The change stream: one typed event per change, from the stores and from the project watcher, to every subscriber."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.gitrepo import git
from tests.catalog_support import tool_source
from tui_agent.core.changes import ChangeFeed
from tui_agent.core.events import BranchChanged, CatalogChanged, FilesChanged, ToolAuthored, UsageChanged
from tui_agent.core.runtime import open_runtime
from tui_agent.core.runtime_state import catalog_of


async def deny(_request: object) -> bool:
    return False


async def next_of(changes, kind: type, timeout: float = 10.0):  # type: ignore[no-untyped-def]
    async def find():  # type: ignore[no-untyped-def]
        async for event in changes:
            if isinstance(event, kind):
                return event

    return await asyncio.wait_for(find(), timeout)


async def test_subscribers_get_each_change_once_in_order(repo: Path) -> None:
    runtime = await open_runtime(repo, approve=deny, sandbox_tier="rlimits")
    try:
        assert runtime.workshop.watcher is not None
        await asyncio.wait_for(runtime.workshop.watcher.ready.wait(), 10)
        async with runtime.core.changes.subscribe() as changes, runtime.core.changes.subscribe() as other:
            await catalog_of(runtime).save("double", tool_source("double"))
            authored = await next_of(changes, ToolAuthored)
            assert (authored.name, authored.kind, authored.created) == ("double", "tool", True)
            changed = await next_of(changes, CatalogChanged)
            assert (changed.names, changed.kind, changed.reason) == (("double",), "tool", "add")

            await catalog_of(runtime).call_tool("double", {"x": 2})
            assert isinstance(await next_of(changes, UsageChanged), UsageChanged)

            (repo / "notes.md").write_text("hello\n")
            assert (await next_of(changes, FilesChanged)).paths == ("notes.md",)
            git(repo, "checkout", "-q", "-b", "topic")
            assert (await next_of(changes, BranchChanged)).branch == "topic"

            # the other subscriber saw the same store events, once each
            seen = []
            while len([e for e in seen if isinstance(e, (ToolAuthored, CatalogChanged))]) < 2:
                seen.append(await asyncio.wait_for(other.__anext__(), 5))
            assert [type(e) for e in seen if isinstance(e, (ToolAuthored, CatalogChanged))] == [ToolAuthored, CatalogChanged]
    finally:
        await runtime.aclose()


async def test_a_closed_subscription_ends_and_publishing_from_a_thread_works() -> None:
    feed = ChangeFeed()
    subscription = feed.subscribe()
    await asyncio.to_thread(feed.publish, FilesChanged(("a.txt",)))
    assert await asyncio.wait_for(subscription.__anext__(), 5) == FilesChanged(("a.txt",))
    subscription.close()
    feed.publish(FilesChanged(("b.txt",)))
    assert [event async for event in subscription] == []
