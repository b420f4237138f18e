"""Tools and recipes behind one VersionedStore: the same verbs, one Change type, one kind of list entry."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.gitrepo import git
from tests.catalog_support import subjects, tool_source
from tui_agent.core.catalog.errors import PipelineError
from tui_agent.core.runtime import open_runtime
from tui_agent.core.versioning.store_interface import Change, StoreItem

RECIPE_V1 = 'description = "Shout"\n[trigger]\non = "command"\n[action]\ntool = "shout"\nargs = { text = "{args}" }\n'
RECIPE_V2 = RECIPE_V1.replace('"Shout"', '"Shout louder"')


async def deny(_request: object) -> bool:
    return False


def versions(kind: str) -> tuple[str, str]:
    if kind == "tool":
        return tool_source("double"), tool_source("double", "return x + x")
    return RECIPE_V1, RECIPE_V2


@pytest.mark.parametrize("kind", ["tool", "recipe"])
async def test_the_same_verbs_for_tools_and_recipes(repo: Path, kind: str) -> None:
    runtime = await open_runtime(repo, approve=deny, sandbox_tier="rlimits", watch=False)
    try:
        store = runtime.store(kind)
        assert store is not None and store.kind == kind
        name = "double" if kind == "tool" else "yell"
        first, second = versions(kind)
        label = f"{kind} {name}"

        added = await store.save(name, first)
        assert isinstance(added, Change) and (added.kind, added.name, added.verb, added.created) == (kind, name, "add", True)
        assert added.committed and added.commit == git(repo, "rev-parse", "HEAD").strip() and added.record.name == name
        updated = await store.save(name, second)
        assert (updated.verb, updated.created, updated.committed) == ("update", False, True)
        assert subjects(repo)[0] == f"tuiagent: update {label}"
        assert [item.name for item in store.items()] == [name] and isinstance(store.items()[0], StoreItem)
        assert store.source(name) == second

        reverted = await store.revert(name)
        assert reverted.verb == "revert" and reverted.committed and store.source(name) == first
        assert subjects(repo)[0].startswith(f"tuiagent: revert {label} to ")
        assert [entry.rev for entry in store.history(name)][0] == reverted.commit
        assert store.diff(name, added.commit) == "" and store.diff(name, updated.commit).count("\n-") >= 1

        pruned = await store.prune(name)
        assert (pruned.verb, pruned.committed, pruned.record) == ("prune", True, None) and store.items() == []
        assert subjects(repo)[0] == f"tuiagent: prune {label}"
        with pytest.raises(PipelineError):
            await store.prune(name)  # already gone: a clear error, no commit
        restored = await store.restore(name)
        assert restored.verb == "restore" and restored.committed and store.source(name) == first
        assert [item.name for item in store.items()] == [name]
    finally:
        await runtime.aclose()
