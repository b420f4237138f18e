"""A reply's back-to-back read-only catalog calls, run in one sandboxed run (one worker, not one per call)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from tui_agent.core.catalog.errors import PipelineError
from tui_agent.core.content import JsonObject, ToolUseBlock, json_object
from tui_agent.core.catalog.reports import check_arguments
from tui_agent.core.protocols import AgentCatalog
from tui_agent.core.sandbox import RunResult

Batchable = Callable[[str, JsonObject], "tuple[str, JsonObject] | None"]
"""A call's (tool name, its arguments) when it may run in a batch, else None."""


def batchable_call(catalog: AgentCatalog, name: str, arguments: JsonObject) -> tuple[str, JsonObject] | None:
    """(tool, checked arguments) of a catalog call that asks nobody and cannot change anything (no NETWORK, no
    WRITES, valid arguments): running it earlier, beside the calls around it, is the same as running it in turn.
    The caller checks that the project is read-only for it (bubblewrap) and that no hook stands around calls."""
    if name == "call_tool":
        target, tool_args = arguments.get("name"), arguments.get("args", {})
        if not isinstance(target, str) or not isinstance(tool_args, dict):
            return None
        name, arguments = target, tool_args
    spec = catalog.spec(name)
    if spec is None or spec.writes or spec.network:
        return None
    try:
        return name, check_arguments(spec, arguments)
    except PipelineError:
        return None  # its own run reports the error


class ReplyBatch:
    """Groups of two or more consecutive batchable calls of one reply; a group runs (`Catalog.call_tools`) when its
    first call starts, and each of its calls takes its own result from that run."""

    def __init__(self, catalog: AgentCatalog, groups: list[list[tuple[str, str, JsonObject]]]) -> None:
        self.catalog = catalog
        self._group_of: dict[str, int] = {call_id: index for index, group in enumerate(groups) for call_id, _n, _a in group}
        self._groups = groups
        self._runs: dict[int, asyncio.Task[list[RunResult]]] = {}

    @classmethod
    def plan(cls, catalog: AgentCatalog, calls: list[ToolUseBlock], batchable: Batchable) -> "ReplyBatch":
        """The groups of `calls` (the reply's tool_use blocks) that `batchable` lets run together."""
        groups: list[list[tuple[str, str, JsonObject]]] = [[]]
        for call in calls:
            arguments = call.get("input")
            found = batchable(call["name"], json_object(arguments)) if isinstance(arguments, dict) else None
            if found is None:
                groups.append([])
            else:
                groups[-1].append((call["id"], *found))
        return cls(catalog, [group for group in groups if len(group) > 1])

    def result_for(self, call_id: str, name: str, arguments: JsonObject) -> Awaitable[RunResult] | None:
        """The batched run's result of this call (starting the group's run), or None when it runs on its own:
        not in a group, or asked with other arguments than planned."""
        index = self._group_of.get(call_id)
        if index is None:
            return None
        group = self._groups[index]
        position = next(i for i, (planned_id, _n, _a) in enumerate(group) if planned_id == call_id)
        if group[position][1:] != (name, arguments):
            return None
        run = self._runs.get(index)
        if run is None:
            run = self._runs[index] = asyncio.get_running_loop().create_task(
                self.catalog.call_tools([(tool, args) for _id, tool, args in group]))
        return self._take(run, position)

    @staticmethod
    async def _take(run: asyncio.Task[list[RunResult]], position: int) -> RunResult:
        return (await asyncio.shield(run))[position]

    async def aclose(self) -> None:
        """Stop the runs no call waits for any more (a cancelled or cut reply)."""
        for run in self._runs.values():
            run.cancel()
        await asyncio.gather(*self._runs.values(), return_exceptions=True)  # each call reported its own failure
