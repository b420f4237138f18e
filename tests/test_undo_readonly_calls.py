"""Undo's bookkeeping around catalog calls: none around a tool without WRITES (the project is read-only for it), and a
call that ran writable without a checkpoint leaves the turn wholly undoable."""

from __future__ import annotations

from pathlib import Path

from tests.agent_helpers import agent_runtime, run_turn
from tests.catalog_support import tool_source
from tests.fake_messages_api import FakeMessagesAPI, reply, text, tool_use
from tests.gitrepo import git
from tui_agent.core.runtime_state import catalog_of

WRITER = '''WRITES = True


def put(text: str) -> str:
    """Write out.txt.

    Args:
        text: what to write
    """
    with open("out.txt", "w", encoding="utf-8") as handle:
        handle.write(text)
    return "written"
'''


def add_tools(repo: Path) -> None:
    tools = repo / ".agent" / "tools"
    tools.mkdir(parents=True)
    (tools / "double.py").write_text(tool_source("double"))
    (tools / "put.py").write_text(WRITER)


async def test_read_only_catalog_calls_take_no_checkpoint_and_a_writes_tool_still_does(repo: Path,
                                                                                       api: FakeMessagesAPI) -> None:
    add_tools(repo)
    async with agent_runtime(repo, api) as runtime:
        assert catalog_of(runtime).get("double") is not None and runtime.core.sandbox.tier == "bubblewrap"
        objects = git(repo, "count-objects", "-v")
        api.enqueue(reply(tool_use("double", {"x": 2}), tool_use("call_tool", {"name": "double", "args": {"x": 3}}),
                          tool_use("double", {"x": 4})), reply(text("4, 6, 8")))
        await run_turn(runtime, "double three numbers")
        turn = runtime.core.undo.turns(runtime.core.session)[-1]
        assert turn.calls == []  # no window: nothing was snapshotted around the three calls
        assert git(repo, "count-objects", "-v") == objects  # nor written to git's objects (same tree, same commit)
        api.enqueue(reply(tool_use("double", {"x": 1}), tool_use("put", {"text": "tool\n"})), reply(text("ok")))
        await run_turn(runtime, "double, then write")
        turn = runtime.core.undo.turns(runtime.core.session)[-1]
        assert turn.calls is not None and len(turn.calls) == 1  # only the WRITES tool's
        result = await runtime.core.undo.undo_last(runtime.core.session)
        assert result.ok and not (repo / "out.txt").exists(), result.message


async def test_a_call_judged_read_only_that_ran_writable_leaves_the_whole_turn_undoable(repo: Path,
                                                                                      api: FakeMessagesAPI) -> None:
    """The tool gained WRITES between the judgement and the run (a file saved in that instant): no checkpoint was
    taken around it, so undo must not take its write for the person's."""
    add_tools(repo)
    async with agent_runtime(repo, api) as runtime:
        runtime.core.undo.writes_nothing = lambda name, arguments: name == "put"  # the judgement made before the save
        api.enqueue(reply(tool_use("put", {"text": "tool\n"})), reply(text("ok")))
        await run_turn(runtime, "write")
        assert (repo / "out.txt").read_text() == "tool\n"
        assert runtime.core.undo.turns(runtime.core.session)[-1].calls is None
        result = await runtime.core.undo.undo_last(runtime.core.session)
        assert result.ok and not (repo / "out.txt").exists(), result.message
