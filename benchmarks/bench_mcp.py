"""Benchmark: a tool file written outside → `tuiagent mcp serve` sends notifications/tools/list_changed → the next
tools/list shows the new version, measured by the official SDK client driving the server as a subprocess over stdio.

Baselines measured in the same run: the raw watchfiles event latency (write → awatch yields) with the same
debounce/step settings the catalog's watcher uses, and the in-process hot reload (write → registry updated, the
validation in the sandbox and the git commit included) that the server waits for before it can announce anything. Target: p50 <= 300 ms from the write to the updated tools/list.

    .venv/bin/python benchmarks/bench_mcp.py [--writes 20]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

import mcp_types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from tui_agent.core.catalog.api import Catalog
from tui_agent.core.project import Project
from tui_agent.core.sandbox import Sandbox
from tui_agent.core.watch import ProjectWatcher

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_hot_reload import TOOL, catalog_latency, make_project, percentile, raw_watchfiles_latency  # noqa: E402



DESCRIBED_TOOL = TOOL.replace("Multiply x by a constant.", "Multiply x by {factor}.")


class Arrivals:
    def __init__(self) -> None:
        self.queue: asyncio.Queue[float] = asyncio.Queue()

    async def __call__(self, message: object) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self.queue.put_nowait(time.perf_counter())


async def served_latency(root: Path, writes: int) -> tuple[list[float], list[float]]:
    """(write → notification, write → tools/list showing the new description), per write."""
    params = StdioServerParameters(command=sys.executable, args=["-m", "tui_agent.cli", "--project", str(root), "mcp", "serve"],
                                   env={k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG")}, cwd=str(root))
    arrivals = Arrivals()
    notified, listed = [], []
    path = root / ".agent" / "tools" / "scale.py"
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, message_handler=arrivals) as session:
            await session.initialize()
            await session.list_tools()
            await asyncio.sleep(1.0)  # the server's watcher is live
            for index in range(writes):
                factor = index + 3
                started = time.perf_counter()
                path.write_text(DESCRIBED_TOOL.format(factor=factor))
                notified.append(await asyncio.wait_for(arrivals.queue.get(), 10) - started)
                tools = (await session.list_tools()).tools
                assert [t.description for t in tools if t.name == "scale"][0].startswith(f"Multiply x by {factor}.")
                listed.append(time.perf_counter() - started)
                await asyncio.sleep(0.1)
                while not arrivals.queue.empty():
                    arrivals.queue.get_nowait()
    return notified, listed


async def in_process_reload(root: Path, writes: int) -> list[float]:
    project = Project.at(root)
    sandbox = await Sandbox.start(project)
    catalog = await Catalog.open(project, sandbox)
    try:
        return await catalog_latency(project, catalog, writes)
    finally:
        await catalog.aclose()
        await sandbox.aclose()


async def main(writes: int) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-mcp-") as folder:
        root = Path(folder) / "project"
        make_project(root)
        tools = root / ".agent" / "tools"
        tools.mkdir(parents=True)
        (tools / "scale.py").write_text(DESCRIBED_TOOL.format(factor=2))
        notified, listed = await served_latency(root, writes)
        probe = ProjectWatcher(Project.at(root))
        raw = await raw_watchfiles_latency(Path(folder) / "raw", writes, probe)
        reload = await in_process_reload(root, writes)
    n50, n90, l50, l90 = (percentile(v, f) for v in (notified, listed) for f in (0.5, 0.9))
    raw50 = percentile(raw, 0.5)
    print(f"writes: {writes}")
    print(f"write -> list_changed received by the client: p50 {n50 * 1000:.0f} ms, p90 {n90 * 1000:.0f} ms, max {max(notified) * 1000:.0f} ms")
    print(f"write -> next tools/list shows it: p50 {l50 * 1000:.0f} ms, p90 {l90 * 1000:.0f} ms  "
          f"[target p50 <= 300 ms: {'PASS' if l50 <= 0.3 else 'FAIL'}]")
    print(f"baseline, raw watchfiles event latency: p50 {raw50 * 1000:.0f} ms")
    reload50 = percentile(reload, 0.5)
    print(f"baseline, in-process hot reload (write -> registry updated): p50 {reload50 * 1000:.0f} ms")
    print(f"ratio notification p50 / raw watchfiles p50: {n50 / raw50:.1f}x; / hot reload p50: {n50 / reload50:.2f}x")


if __name__ == "__main__":
    from trusted_temp import trust_temporary_projects

    trust_temporary_projects()
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--writes", type=int, default=20)
    asyncio.run(main(parser.parse_args().writes))
