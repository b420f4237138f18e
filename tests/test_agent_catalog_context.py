"""Catalog in context with 1,000 tools: the index fits the token budget, top K schemas only, every tool reachable."""

from __future__ import annotations

import json
from pathlib import Path

from tests.agent_helpers import agent_runtime, of_type, run_turn
from tests.fake_messages_api import FakeMessagesAPI, reply, text, tool_use
from tui_agent.core.agent.system_prompt import estimate_tokens
from tui_agent.core.catalog.models import ToolSpec
from tui_agent.core.catalog.toolfile import source_sha
from tui_agent.core.events import ToolCallFinished, TurnFinished
from tui_agent.core.runtime_state import agent_of, catalog_of

TOOLS = 1000


def tool_source(i: int) -> str:
    return f'''"""Tool number {i}."""


def tool_{i:04d}(x: int) -> int:
    """Add {i} to x; one of a thousand tools that fill the catalog for the context budget test.

    Args:
        x: A number.
    """
    return x + {i}
'''


def register_many(catalog: object, repo: Path) -> None:
    """Write 1,000 tool files and register them in the catalog's registry (inspection and commits skipped to keep the test fast)."""
    registry = catalog.registry  # type: ignore[attr-defined]
    for i in range(TOOLS):
        data = tool_source(i).encode()
        path = repo / f".agent/tools/tool_{i:04d}.py"
        path.write_bytes(data)
        schema = {"type": "object", "properties": {"x": {"type": "integer", "description": "A number."}}, "required": ["x"]}
        spec = ToolSpec(f"tool_{i:04d}", f"Add {i} to x; one of a thousand tools that fill the catalog for the context budget test.", schema, source_sha(data))
        registry.register(spec.name, spec, path, None)


def index_part(system_text: str) -> str:
    return system_text[system_text.index("Catalog index"):].split("\n\n# Environment", 1)[0]


async def test_a_thousand_tools_stay_within_the_bounds_and_all_are_reachable(repo: Path) -> None:
    with FakeMessagesAPI() as api:
        api.enqueue(
            reply(tool_use("search_tools", {"query": "777"})),
            reply(tool_use("call_tool", {"name": "tool_0777", "args": {"x": 1}})),
            reply(text("tool_0777 gives 778")),
            reply(text("no")),
            reply(text("yes")),
        )
        async with agent_runtime(repo, api) as runtime:
            register_many(catalog_of(runtime), repo)
            events = await run_turn(runtime, "find the tool that adds 777 and call it with 1")
            await run_turn(runtime, "is it listed now?")
            agent_of(runtime).clear()
            await run_turn(runtime, "and in a new conversation?")
    assert of_type(events, TurnFinished)[0].text == "tool_0777 gives 778"
    first, second, third, fourth, fifth = api.requests
    builtins = ["read_file", "write_file", "edit_file", "list_files", "grep", "run_shell", "run_python",
                "create_tool", "prune_tool", "search_tools", "call_tool", "create_recipe", "web_fetch", "update_plan",
                "propose_plan"]
    for request in api.requests:
        index = index_part(request.system_text)
        assert estimate_tokens(index) <= 2000
        assert "use search_tools" in index and "more tools not listed here" in index
        catalog_tools = [name for name in request.tool_names if name not in builtins]
        assert len(catalog_tools) == 40 and set(builtins) <= set(request.tool_names)
    assert "tool_0777" not in first.tool_names and "tool_0777" not in index_part(first.system_text)
    found = json.loads(second.tool_result_text().split("\n", 1)[1])
    assert found[0]["name"] == "tool_0777" and found[0]["input_schema"]["required"] == ["x"]
    assert third.tool_result_text() == "778"
    call = [e for e in of_type(events, ToolCallFinished) if e.name == "call_tool"][0]
    assert not call.is_error
    # how big a request is with 1,000 tools: the index and 40 schemas, not the whole catalog
    assert len(json.dumps(first.body["tools"])) < 40_000 and len(first.system_text) < 8_000 + 4 * 2000
    # the tools and the system prompt stay put for the prompt cache while the conversation goes on ...
    assert fourth.tools == first.tools and fourth.system_text == first.system_text
    # ... and a new conversation ranks by recency and use: the tool just used moves into the top K and the index
    assert "tool_0777" in fifth.tool_names and "- tool_0777:" in fifth.system_text

