"""Benchmark: the agent's per-request overhead and the cost of building a request from a 1,000-tool catalog.

1. Turn overhead: N one-request turns through `Agent.run_turn` (catalog sync, prompt and tools rebuilt,
   session appended and flushed, events) against the local fake Messages API server, versus the baseline
   measured in the same run: the same number of bare `AsyncAnthropic.messages.stream` calls to that server.
2. Request building: `Agent.build_request()` with 1,000 registered tools versus with an empty catalog.

    .venv/bin/python benchmarks/bench_agent.py [--turns 50] [--tools 1000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from anthropic import AsyncAnthropic  # noqa: E402

from tests.fake_messages_api import FakeMessagesAPI, reply, text  # noqa: E402
from tui_agent.core.agent.permissions import approve_all  # noqa: E402
from tui_agent.core.catalog.models import ToolSpec  # noqa: E402
from tui_agent.core.catalog.toolfile import source_sha  # noqa: E402
from tui_agent.core.runtime import open_runtime  # noqa: E402

SCHEMA = {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}


def make_repo(folder: Path) -> Path:
    for args in (["init", "-q", "-b", "main"], ["config", "user.email", "b@example.com"], ["config", "user.name", "Bench"]):
        subprocess.run(["git", *args], cwd=folder, check=True)
    (folder / "README.md").write_text("bench\n")
    subprocess.run(["git", "add", "README.md"], cwd=folder, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "init"], cwd=folder, check=True)
    return folder


async def bare_sdk(api: FakeMessagesAPI, turns: int) -> float:
    client = AsyncAnthropic(api_key="bench", base_url=api.base_url, max_retries=0)
    api.enqueue(*[reply(text("a short answer"))] * turns)
    started = time.perf_counter()
    for _ in range(turns):
        async with client.messages.stream(model="m", max_tokens=100, messages=[{"role": "user", "content": "hi"}]) as stream:
            async for _event in stream:
                pass
    elapsed = time.perf_counter() - started
    await client.close()
    return elapsed / turns


async def agent_turns(repo: Path, api: FakeMessagesAPI, turns: int) -> float:
    runtime = await open_runtime(repo, approve=approve_all, base_url=api.base_url, api_key="bench")
    assert runtime.agent is not None
    api.enqueue(*[reply(text("a short answer"))] * turns)
    started = time.perf_counter()
    for index in range(turns):
        runtime.new_session()  # one-request conversations, like the baseline
        async for _event in runtime.agent.run_turn(f"prompt {index}"):
            pass
    elapsed = time.perf_counter() - started
    await runtime.aclose()
    return elapsed / turns


async def build_request_times(repo: Path, tools: int) -> tuple[float, float, int, int]:
    runtime = await open_runtime(repo, approve=approve_all, base_url="http://127.0.0.1:9", api_key="bench")
    agent = runtime.agent
    assert agent is not None and runtime.workshop.catalog is not None

    def timed() -> float:
        started = time.perf_counter()
        for _ in range(20):
            agent.build_request()
        return (time.perf_counter() - started) / 20

    empty = timed()
    pipeline = runtime.workshop.catalog.pipeline
    for i in range(tools):
        data = f"def tool_{i:04d}(x: int) -> int:\n    return x + {i}\n".encode()
        (repo / f".agent/tools/tool_{i:04d}.py").write_bytes(data)
        pipeline.register(f"tool_{i:04d}", ToolSpec(f"tool_{i:04d}", f"Add {i} to x.", SCHEMA, source_sha(data)), data, None)
    full = timed()
    system, tool_list = agent.build_request()
    await runtime.aclose()
    return empty, full, len(json.dumps(system)), len(json.dumps(tool_list))


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=50)
    parser.add_argument("--tools", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temp, FakeMessagesAPI() as api:
        base = Path(temp)
        (base / "a").mkdir()
        (base / "b").mkdir()
        baseline = await bare_sdk(api, args.turns)
        per_turn = await agent_turns(make_repo(base / "a"), api, args.turns)
        empty, full, system_chars, tools_chars = await build_request_times(make_repo(base / "b"), args.tools)
    print(f"bare SDK streamed request (baseline): {baseline * 1000:.1f} ms")
    print(f"agent one-request turn:               {per_turn * 1000:.1f} ms  (ratio {per_turn / baseline:.2f}x baseline, "
          f"overhead {1000 * (per_turn - baseline):.1f} ms)")
    print(f"build_request, empty catalog:         {empty * 1000:.2f} ms")
    print(f"build_request, {args.tools} tools:           {full * 1000:.2f} ms  (ratio {full / empty:.1f}x empty)")
    print(f"request size with {args.tools} tools: system {system_chars} chars (~{system_chars // 4} tokens), "
          f"tools {tools_chars} chars (~{tools_chars // 4} tokens)")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from trusted_temp import trust_temporary_projects

    trust_temporary_projects()
    asyncio.run(main())
