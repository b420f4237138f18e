"""The usage counts of a reply's catalog calls reach state.db in one transaction at the reply's end, every call counted
(a cancelled reply keeps what it ran); in between, the process itself reads them."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tests.agent_helpers import agent_runtime
from tests.catalog_support import tool_source
from tests.fake_messages_api import FakeMessagesAPI, reply, text, tool_use
from tui_agent.core.events import ToolCallFinished
from tui_agent.core.runtime_state import agent_of, catalog_of


def runs_on_disk(repo: Path) -> int:
    """Tool runs committed to state.db, as another process (`tuiagent tools ...`) sees them."""
    with sqlite3.connect(repo / ".agent" / "state.db") as db:
        return int(db.execute("SELECT COUNT(*) FROM tool_runs WHERE tool = 'double'").fetchone()[0])


async def test_a_replys_calls_are_counted_in_one_transaction_at_its_end(repo: Path, api: FakeMessagesAPI) -> None:
    tools = repo / ".agent" / "tools"
    tools.mkdir(parents=True)
    (tools / "double.py").write_text(tool_source("double"))
    async with agent_runtime(repo, api) as runtime:
        assert agent_of(runtime) is not None
        api.enqueue(reply(*[tool_use("double", {"x": index}) for index in range(3)]), reply(text("done")))
        seen: list[int] = []
        async for event in agent_of(runtime).run_turn("double three numbers"):
            if isinstance(event, ToolCallFinished):
                seen.append(runs_on_disk(repo))
        assert seen == [0, 0, 0]  # no commit per call
        assert runs_on_disk(repo) == 3 and catalog_of(runtime).state.usage()["double"].calls == 3

        # a list_files between them: each `double` runs on its own (back-to-back read-only calls share one run)
        calls = [tool_use("double", {"x": 0}), tool_use("list_files", {}), tool_use("double", {"x": 1}),
                 tool_use("list_files", {}), tool_use("double", {"x": 2})]
        api.enqueue(reply(*calls), reply(text("done")))
        turn = agent_of(runtime).run_turn("again, stopped after the second")
        finished = 0
        async for event in turn:
            if isinstance(event, ToolCallFinished) and event.name == "double":
                finished += 1
                assert catalog_of(runtime).state.usage()["double"].calls == 3 + finished  # the process reads its own
                if finished == 2:
                    break
        await turn.aclose()  # the person cancels: the calls that ran are still counted
        assert runs_on_disk(repo) == 5
