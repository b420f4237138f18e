"""The tool executor: runs a reply's tool calls one after another, yielding their events and their tool_result blocks."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator

from tui_agent.core.agent.callgate import CallGate, InputReplaced
from tui_agent.core.agent.catalog_tools import call_catalog_tool
from tui_agent.core.agent.livecall import LiveCall
from tui_agent.core.agent.model import ModelReply
from tui_agent.core.agent.permissions import Permissions
from tui_agent.core.agent.providers import ToolProvider
from tui_agent.core.agent.replybatch import ReplyBatch, batchable_call
from tui_agent.core.agent.stops import CUT_OFF
from tui_agent.core.agent.toolbase import BuiltinTool, ToolContext, ToolFailure, ToolOutput
from tui_agent.core.agent.toolresults import result_block, sandbox_failure, told_of_quarantine, trimmed_traceback
from tui_agent.core.changes import ChangeEvent, ChangeFeed
from tui_agent.core.content import JsonObject, tool_input, ToolResultBlock, ToolUseBlock
from tui_agent.core.events import CatalogChanged, Event, ToolAuthored, ToolCallFinished, ToolCallStarted
from tui_agent.core.project import Project
from tui_agent.core.protocols import AgentCatalog, AgentRecipes, AgentSandbox
from tui_agent.core.sandbox import TIER_BUBBLEWRAP, SandboxUnavailable


class ToolExecutor:
    """Runs tool calls: built-ins, catalog tools (in the sandbox), providers' tools (MCP). `authored_names` is the
    agent's list of tools authored this session (newest last), kept up to date here; `builtins` and `providers` are
    the agent's own (shared, not copied)."""

    def __init__(self, *, project: Project, permissions: Permissions, builtins: dict[str, BuiltinTool],
                 providers: list[ToolProvider], authored_names: list[str], sandbox: AgentSandbox | None = None,
                 catalog: AgentCatalog | None = None, recipes: AgentRecipes | None = None,
                 changes: ChangeFeed | None = None) -> None:
        self.project = project
        self.permissions = permissions
        self.builtins = builtins
        self.tool_providers = providers
        self.authored_names = authored_names
        self.sandbox = sandbox
        self.catalog = catalog
        self.recipes = recipes
        self.changes = changes
        self.gate: CallGate | None = None

    def writes_nothing(self, name: str, arguments: JsonObject) -> bool:
        """Whether the call cannot change the project: a catalog tool without WRITES (by its name or through
        `call_tool`) run by bubblewrap, which mounts the project read-only for it (undo checkpoints nothing around it)."""
        if name == "call_tool" and name in self.builtins:
            target = arguments.get("name")
            name = target if isinstance(target, str) else ""
        elif name in self.builtins:
            return False
        if self.catalog is None or self.sandbox is None or self.sandbox.tier != TIER_BUBBLEWRAP:
            return False
        spec = self.catalog.spec(name)
        return spec is not None and not spec.writes

    async def answer_calls(self, reply: ModelReply, answered: list[ToolResultBlock],
                            outputs: list[tuple[ToolUseBlock, ToolOutput]]) -> AsyncIterator[Event]:
        """Run the reply's tool calls one after another: their events go out, their result blocks into `answered`."""
        cut_call_id = reply.tool_uses[-1]["id"] if reply.stop_reason in CUT_OFF else None
        batch = self.plan_batch(reply, cut_call_id)
        try:
            with self.one_usage_transaction() as flush:
                for call in reply.tool_uses:
                    output: ToolOutput | None = None
                    async for event in self.call(call, cut_off=call["id"] == cut_call_id,
                                                 bad_input=reply.invalid_inputs.get(call["id"]), batch=batch):
                        if isinstance(event, ToolOutput):
                            output = event
                        else:
                            yield event
                    assert output is not None
                    answered.append(result_block(call["id"], output))
                    outputs.append((call, output))
                await flush()  # the commit off the event loop (leaving the block finds nothing left)
        finally:
            if batch is not None:
                await batch.aclose()

    def plan_batch(self, reply: ModelReply, cut_call_id: str | None) -> ReplyBatch | None:
        """The reply's back-to-back catalog calls that can share one sandboxed run: none asks anyone or can change
        anything (bubblewrap keeps the project read-only for them), and no hook stands around the calls."""
        catalog = self.catalog
        if self.gate is not None or catalog is None:
            return None
        whole = [call for call in reply.tool_uses if call["id"] != cut_call_id and call["id"] not in reply.invalid_inputs]

        def batchable(name: str, arguments: JsonObject) -> tuple[str, JsonObject] | None:
            return batchable_call(catalog, name, arguments) if self.writes_nothing(name, arguments) else None

        return ReplyBatch.plan(catalog, whole, batchable)

    @contextlib.contextmanager
    def one_usage_transaction(self) -> Iterator[Callable[[], Awaitable[None]]]:
        """The usage counts of a reply's catalog calls go to state.db in one transaction, at its end (reads in
        between see them; a cancelled reply saves what it ran); yields the flush to await before leaving."""
        state = self.catalog.state if self.catalog is not None else None

        async def flush() -> None:
            if state is not None and state.pending_writes:
                await asyncio.to_thread(state.flush)

        if state is None:
            yield flush
            return
        with state.deferred():
            yield flush

    async def call(self, call: ToolUseBlock, *, cut_off: bool, bad_input: str | None = None,
                   batch: ReplyBatch | None = None) -> AsyncIterator[Event | ToolOutput]:
        name, call_id = call["name"], call["id"]
        arguments = tool_input(call)
        authored = name not in self.builtins and not any(provider.handles(name) for provider in self.tool_providers)
        yield ToolCallStarted(call_id=call_id, name=name, arguments=arguments, authored=authored)
        context = ToolContext(self.project, self.permissions, self.sandbox, self.catalog, self.recipes, call_id, name)
        if batch is not None:
            context.batched = functools.partial(batch.result_for, call_id)
        started = time.perf_counter()
        quarantined = len(self.sandbox.notices) if self.sandbox is not None else 0  # quarantine notes so far
        with self.forwarding_store_changes(context.events):
            running = LiveCall(self.run_guarded(context, name, arguments, cut_off=cut_off, bad_input=bad_input), context)
            async for live_event in running.events():
                yield live_event
            output = running.output()
        duration_ms = (time.perf_counter() - started - context.approval_wait_s) * 1000  # the run's time, not the person's
        output = told_of_quarantine(output, self.sandbox, quarantined, context.events)
        for event in context.events:
            yield event
        if name == "create_tool" and not output.is_error:
            tool_name = str(arguments.get("name", ""))  # a string: create_tool succeeded
            if tool_name in self.authored_names:
                self.authored_names.remove(tool_name)
            self.authored_names.append(tool_name)
        yield ToolCallFinished(call_id, name, output.text, output.is_error, duration_ms, authored=authored, truncated=output.truncated)
        yield output

    async def run_guarded(self, context: ToolContext, name: str, arguments: JsonObject, *, cut_off: bool,
                          bad_input: str | None) -> ToolOutput:
        """The call's output; a failure (expected or not) becomes an error result, never an exception."""
        try:
            if cut_off:
                raise ToolFailure("your reply was cut off (max_tokens or the context window) before this call's input was complete; "
                                  "send it again, shorter")
            if bad_input:
                raise ToolFailure(f"{bad_input}; nothing was run: send the call again with a complete JSON object as input")
            if self.gate is not None:
                arguments = await self.gate.before_call(context, arguments)
            try:
                output = await self.dispatch(context, name, arguments)
            except InputReplaced as replaced:
                arguments = replaced.arguments
                output = await self.dispatch(context, name, arguments)
            return output if self.gate is None else await self.gate.after_call(context, arguments, output)
        except ToolFailure as failure:
            return ToolOutput(str(failure), is_error=True)
        except SandboxUnavailable as error:  # e.g. bubblewrap refused to start: the person must see it too
            return sandbox_failure(name, error, context.events)
        except Exception as error:  # a bug or an unexpected failure in a tool must not end the conversation
            return ToolOutput(trimmed_traceback(error), is_error=True)

    @contextlib.contextmanager
    def forwarding_store_changes(self, into: list[Event]) -> Iterator[None]:
        """While a call runs, what the catalog and the recipe store publish (ToolAuthored, CatalogChanged) joins its events."""
        def forward(event: ChangeEvent) -> None:
            if isinstance(event, (ToolAuthored, CatalogChanged)):
                into.append(event)

        if self.changes is None:
            yield
            return
        self.changes.add_listener(forward)
        try:
            yield
        finally:
            self.changes.remove_listener(forward)

    async def dispatch(self, context: ToolContext, name: str, arguments: JsonObject) -> ToolOutput:
        builtin = self.builtins.get(name)
        if builtin is not None:
            result = await builtin.handler(context, arguments)
            return result if isinstance(result, ToolOutput) else ToolOutput(str(result))
        if self.catalog is not None and (self.catalog.spec(name) is not None or self.catalog.get(name) is not None):
            return await call_catalog_tool(context, name, arguments)
        for provider in self.tool_providers:
            if provider.handles(name):
                return await provider.call(context, name, arguments)
        raise ToolFailure(f"there is no tool named {name!r}; use search_tools to find catalog tools, or call_tool {{name, args}}")
