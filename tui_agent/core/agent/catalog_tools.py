"""The catalog built-ins: create_tool, prune_tool, search_tools, call_tool, create_recipe, and calling catalog tools.

They never announce changes themselves: the catalog and the recipe store publish ToolAuthored / CatalogChanged on the
project's change feed, and the agent loop forwards what was published during a call into the turn's events."""

from __future__ import annotations

import json

from tui_agent.core.agent.exec_tools import format_run_result
from tui_agent.core.agent.permissions import ApprovalRequest
from tui_agent.core.catalog.errors import PipelineError
from tui_agent.core.catalog.models import ToolRecord
from tui_agent.core.catalog.names import lookup_problem
from tui_agent.core.agent.toolbase import BuiltinTool, ToolContext, ToolFailure, ToolOutput, require_str, schema
from tui_agent.core.events import Notice
from tui_agent.core.hostnames import describe_grant
from tui_agent.core.protocols import AgentCatalog
from tui_agent.core.recipes.formathelp import FORMAT_HELP
from tui_agent.core.content import JsonObject

SEARCH_RESULTS = 10


def _catalog(ctx: ToolContext) -> AgentCatalog:
    if ctx.catalog is None:
        raise ToolFailure("the tool catalog is not available in this session")
    return ctx.catalog


def pipeline_failure(error: PipelineError) -> ToolOutput:
    """A PipelineError as an is_error result the model can act on: the stage, the message, the line."""
    details = error.to_dict()
    return ToolOutput(
        "create_tool failed; the catalog is unchanged (the previous version, if any, stays live).\n" + json.dumps(details, indent=1, default=str),
        is_error=True,
    )


def checked_name(args: JsonObject, noun: str) -> str:
    """The `name` argument, refused with the reason when it cannot name a tool or recipe (a path, non-ASCII, ...)."""
    name = require_str(args, "name")
    problem = lookup_problem(name, noun)
    if problem is not None:
        raise ToolFailure(f"refused: {problem}")
    return name


async def create_tool(ctx: ToolContext, args: JsonObject) -> ToolOutput:
    name = checked_name(args, "tool")
    source = require_str(args, "source")
    catalog = _catalog(ctx)
    existed = catalog.get(name) is not None
    try:
        record: ToolRecord = (await catalog.save(name, source, author="agent")).record
    except PipelineError as error:
        return pipeline_failure(error)
    spec = record.spec
    tests = spec.tests if spec else ()
    commit = record.commit
    if commit:
        committed = f" (commit {commit[:10]})"
    else:
        why = catalog.commit_blocker() or "the commit was deferred"
        committed = f" (registered, not committed: {why})"
        ctx.events.append(Notice(f"tool {name} saved but not committed: {why}", "warning"))
    lines = [
        f"{'updated' if existed else 'created'} tool {name}{committed}",
        f"tests: {sum(t.ok for t in tests)}/{len(tests)} passed" if tests else "tests: none (add test_* functions)",
        f"it is now callable directly as `{name}` on your next request; input schema:",
        json.dumps(spec.input_schema if spec else {}, indent=1),
    ]
    return ToolOutput("\n".join(lines))


async def prune_tool(ctx: ToolContext, args: JsonObject) -> ToolOutput:
    name = checked_name(args, "tool")
    catalog = _catalog(ctx)
    if catalog.get(name) is None:
        raise ToolFailure(f"no tool named {name!r} in the catalog")
    try:
        await catalog.prune(name)
    except PipelineError as error:
        return ToolOutput(json.dumps(error.to_dict()), is_error=True)
    return ToolOutput(f"pruned {name} (a new commit; it can be restored from history)")


async def search_tools(ctx: ToolContext, args: JsonObject) -> ToolOutput:
    query = require_str(args, "query", allow_empty=True)
    catalog = _catalog(ctx)
    specs = catalog.search(query, limit=SEARCH_RESULTS)
    if not specs:
        return ToolOutput(f"no catalog tool matches {query!r}; consider create_tool")
    entries = [{"name": s.name, "description": s.description, "input_schema": s.input_schema} for s in specs]
    return ToolOutput("Call these with call_tool {name, args} (or directly when listed in your tools):\n" + json.dumps(entries, indent=1))


async def call_catalog_tool(ctx: ToolContext, name: str, tool_args: JsonObject) -> ToolOutput:
    """Run a catalog tool by name (its last good version), asking first when it declares NETWORK or WRITES;
    a tool without WRITES runs with the project read-only."""
    catalog = _catalog(ctx)
    spec = catalog.spec(name)  # not `get`: a call needs no usage counts, drift status or git look-up
    if spec is None:
        record = catalog.get(name)
        problem = f" (it is broken: {record.error.message})" if record is not None and record.error is not None else ""
        raise ToolFailure(f"no callable catalog tool named {name!r}{problem}; use search_tools to find one")
    from tui_agent.core.catalog.reports import check_arguments

    try:
        tool_args = check_arguments(spec, tool_args)  # before asking anyone: a malformed call is the model's to fix
    except PipelineError as error:
        raise ToolFailure(f"{name}: {error.message}") from None
    arguments = json.dumps(tool_args, indent=1)
    if spec.network:
        reach = describe_grant(spec.network)
        await ctx.require_approval(ApprovalRequest("network", name, f"{name} uses the network ({reach})", arguments))
    if spec.writes:  # WRITES = True: it runs with the project writable, so it asks like a file edit
        await ctx.require_approval(ApprovalRequest("write", name, f"{name} may change project files (WRITES = True)", arguments))
    batched = ctx.batched(name, tool_args) if ctx.batched is not None else None
    try:
        result = await (batched if batched is not None else
                        catalog.call_tool(name, tool_args, allow_network=bool(spec.network), allow_writes=spec.writes))
    except PipelineError as error:  # bad arguments for the schema, or the tool vanished
        raise ToolFailure(f"{name}: {error.message}") from None
    return format_run_result(result)


async def call_tool(ctx: ToolContext, args: JsonObject) -> ToolOutput:
    name = checked_name(args, "tool")
    tool_args = args.get("args", {})
    if not isinstance(tool_args, dict):
        raise ToolFailure("`args` must be an object of the tool's arguments")
    return await call_catalog_tool(ctx, name, tool_args)


async def create_recipe(ctx: ToolContext, args: JsonObject) -> ToolOutput:
    name = checked_name(args, "recipe")
    source = require_str(args, "source")
    if ctx.recipes is None:
        raise ToolFailure("recipes are not available in this session")
    existed = ctx.recipes.get(name) is not None
    try:
        record = await ctx.recipes.save_recipe(name, source, author="agent")
    except PipelineError as error:
        return ToolOutput("create_recipe failed; nothing changed.\n" + json.dumps(error.to_dict(), indent=1, default=str), is_error=True)
    commit = record.commit
    problems = f"; not runnable yet: {'; '.join(record.problems)}" if record.problems else ""
    return ToolOutput(f"{'updated' if existed else 'saved'} recipe {name}" + (f" (commit {commit[:10]})" if commit else "") + problems)


CATALOG_TOOLS: tuple[BuiltinTool, ...] = (
    BuiltinTool(
        "create_tool",
        "Create or update a catalog tool: `source` is the full text of `.agent/tools/<name>.py` (one public function named like the file, "
        "type hints, a docstring with a summary and Args:, test_* functions). It is checked, its tests run in the sandbox, then it is "
        "committed and callable by name from your next request. An update is the same call with the same name.",
        schema({"name": {"type": "string"}, "source": {"type": "string"}}, ["name", "source"]),
        create_tool,
    ),
    BuiltinTool("prune_tool", "Remove a catalog tool that is obsolete or duplicated (a git commit; it can be restored).",
                schema({"name": {"type": "string"}}, ["name"]), prune_tool),
    BuiltinTool("search_tools", "Search the whole tool catalog by words of a name or description; returns names, descriptions and input schemas.",
                schema({"query": {"type": "string"}}, ["query"]), search_tools),
    BuiltinTool("call_tool", "Call any catalog tool by name, including those not listed in your tools: `args` are its arguments.",
                schema({"name": {"type": "string"}, "args": {"type": "object"}}, ["name", "args"]), call_tool),
)

CREATE_RECIPE = BuiltinTool(
    "create_recipe",
    "Create or update a recipe `.agent/recipes/<name>.toml` (`source` is the full TOML: a trigger and an action). "
    "It is validated and committed.\n\n" + FORMAT_HELP,
    schema({"name": {"type": "string"}, "source": {"type": "string"}}, ["name", "source"]),
    create_recipe,
)
