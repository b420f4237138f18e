"""A scripted long turn for measuring the prompt cache: a catalog of N tools, calls in and outside the top K, a tool authored half-way.

Used by tests/test_prompt_cache.py (a short turn) and benchmarks/bench_prompt_cache.py (30 requests).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tests.agent_helpers import agent_runtime
from tests.fake_messages_api import FakeMessagesAPI, RecordedRequest, Response, reply, text, tool_use
from tui_agent.core.catalog.models import ToolSpec
from tui_agent.core.catalog.toolfile import source_sha
from tui_agent.core.events import ToolCallFinished, TurnFinished
from tui_agent.core.runtime_state import agent_of, catalog_of

AUTHORED = '''"""Add two numbers."""


def sum_pair(a: int, b: int) -> int:
    """Add two numbers and return their sum.

    Args:
        a: The first number.
        b: The second number.
    """
    return a + b


def test_sum_pair() -> None:
    assert sum_pair(2, 3) == 5
'''


def catalog_tool(i: int) -> tuple[str, str, dict[str, object], str]:
    """Name, description, schema and source of the i-th catalog tool."""
    name = f"metric_{i:02d}"
    description = (f"Compute project metric number {i} from a base value and an optional label; it stands for one of the "
                   "many small helpers an agent authors over weeks (log greps, config readers, report builders).")
    schema = {"type": "object", "properties": {"x": {"type": "integer", "description": "The base value."},
                                               "label": {"type": "string", "description": "An optional label echoed back."}},
              "required": ["x"]}
    source = f'"""{description}"""\n\n\ndef {name}(x: int, label: str = "") -> int:\n    """{description}\n\n    Args:\n        x: The base value.\n        label: An optional label.\n    """\n    return x + {i}\n'
    return name, description, schema, source


def register_catalog(catalog: object, repo: Path, count: int) -> None:
    """Write and register `count` tools (registered directly, skipping inspection, to keep the setup fast)."""
    registry = catalog.registry  # type: ignore[attr-defined]
    for i in range(count):
        name, description, schema, source = catalog_tool(i)
        path = repo / f".agent/tools/{name}.py"
        path.write_text(source)
        registry.register(name, ToolSpec(name, description, schema, source_sha(source.encode())), path, None)


def scripted_reply(index: int, requests: int, top_k: int, tools: int) -> Response:
    """The model's reply to the index-th request of the turn."""
    if index == requests - 1:
        return reply(text("All metrics gathered; sum_pair is in the catalog now."))
    if index == requests // 2:
        return reply(text("This addition keeps coming back: I will make it a tool."), tool_use("create_tool", {"name": "sum_pair", "source": AUTHORED}))
    if index == requests // 2 + 1:
        return reply(text("\n\n"), tool_use("sum_pair", {"a": index, "b": 2}))
    kind = index % 4
    if kind == 0:  # a tool outside the top K, through call_tool
        return reply(text(f"Metric {top_k + index % (tools - top_k)}."),
                     tool_use("call_tool", {"name": f"metric_{top_k + index % (tools - top_k):02d}", "args": {"x": index}}))
    if kind == 1:  # a top-K tool, called directly
        return reply(tool_use(f"metric_{index % top_k:02d}", {"x": index, "label": "direct"}))
    if kind == 2:
        return reply(text("Reading the notes.\n\n"), tool_use("read_file", {"path": "NOTES.md"}))
    return reply(text("\n\n"), tool_use("grep", {"pattern": "metric", "path": "."}))


@dataclass(frozen=True)
class CacheFigures:
    """Token sums over the turn's requests: the ideal (prefix shared with an earlier request) and what the cache did."""

    requests: int
    ideal: int
    read: int
    written: int
    uncached: int
    tool_errors: int
    finished: bool

    @property
    def ratio(self) -> float:
        return self.read / self.ideal if self.ideal else 1.0


async def run_turn_for_cache(repo: Path, *, requests: int, tools: int, top_k: int, strict: bool = True) -> tuple[CacheFigures, list[RecordedRequest]]:
    (repo / ".agent").mkdir(exist_ok=True)
    (repo / ".agent/config.toml").write_text(f"[catalog]\ntop_k = {top_k}\n\n[agent]\nmax_turns = {requests + 5}\n")
    (repo / "NOTES.md").write_text("".join(f"- metric {i}: computed nightly from the build logs\n" for i in range(60)))
    with FakeMessagesAPI(strict=strict) as api:
        api.respond_with(lambda request: scripted_reply(len(api.requests) - 1, requests, top_k, tools))
        async with agent_runtime(repo, api) as runtime:
            register_catalog(catalog_of(runtime), repo, tools)
            assert agent_of(runtime) is not None
            events = [event async for event in agent_of(runtime).run_turn("Gather every metric of this project.")]
        log = list(api.cache_log)
        sent = list(api.requests)
    figures = CacheFigures(
        requests=len(log), ideal=sum(u.ideal for u in log), read=sum(u.read for u in log), written=sum(u.write for u in log),
        uncached=sum(u.uncached for u in log), tool_errors=sum(1 for e in events if isinstance(e, ToolCallFinished) and e.is_error),
        finished=any(isinstance(e, TurnFinished) for e in events),
    )
    return figures, sent
