"""Benchmark: file write → file_changed recipe result (tool action in the sandbox), p50/p95, beside a raw watchfiles baseline.

Method: a temporary git repo with one tool (`count_lines`) and one recipe (`on = "file_changed"`, `debounce_ms = 0`).
The engine's watcher runs; each trial writes `src/mod.py` and waits for the engine's result Notice. The baseline, in the
same run and on the same machine, with the same pause between trials, is the time from a write to a bare `watchfiles.awatch` (same step) reporting it,
plus a direct `catalog.call_tool` of the same tool: what the recipe path costs beyond the watcher and the sandbox.

Run: .venv/bin/python benchmarks/bench_recipes.py [--trials N]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import watchfiles

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tui_agent.core.catalog.api import Catalog  # noqa: E402
from tui_agent.core.events import Notice  # noqa: E402
from tui_agent.core.project import Project  # noqa: E402
from tui_agent.core.recipes import LoopGuard, open_recipes  # noqa: E402
from tui_agent.core.sandbox import Sandbox  # noqa: E402

TOOL = '''
def count_lines(path: str) -> int:
    """Count the lines of a project file.

    Args:
        path: project-relative path
    """
    with open(path, encoding="utf-8") as handle:
        return len(handle.readlines())
'''
PAUSE_S = 0.15  # between trials, the same for every measurement (lets the sandbox's warm worker be replaced)
RECIPE = '''description = "count lines"
[trigger]
on = "file_changed"
paths = ["src/*.py"]
debounce_ms = 0
[action]
tool = "count_lines"
args = { path = "{path}" }
'''


def init_repo(root: Path) -> None:
    root.mkdir(parents=True)
    for args in (["init", "-q", "-b", "main"], ["config", "user.email", "b@example.com"], ["config", "user.name", "Bench"]):
        subprocess.run(["git", *args], cwd=root, check=True)
    (root / "README.md").write_text("bench\n")
    subprocess.run(["git", "add", "README.md"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "initial"], cwd=root, check=True)
    (root / "src").mkdir()


async def raw_watchfiles(root: Path, trials: int) -> list[float]:
    target = root / "src" / "raw.py"
    times: list[float] = []
    stop = asyncio.Event()
    seen = asyncio.Queue()

    async def watch() -> None:
        async for _changes in watchfiles.awatch(root / "src", debounce=1600, step=30, stop_event=stop):
            seen.put_nowait(time.perf_counter())

    task = asyncio.create_task(watch())
    await asyncio.sleep(0.5)
    for index in range(trials):
        started = time.perf_counter()
        target.write_text(f"x = {index}\n")
        times.append((await asyncio.wait_for(seen.get(), 10)) - started)
        await asyncio.sleep(PAUSE_S)
    stop.set()
    await task
    return times


async def main(trials: int) -> None:
    with tempfile.TemporaryDirectory() as temp:
        root = Path(temp) / "project"
        init_repo(root)
        project = Project.at(root)
        raw = await raw_watchfiles(root, trials)
        sandbox = await Sandbox.start(project)
        catalog = await Catalog.open(project, sandbox)
        await catalog.save("count_lines", TOOL)
        direct: list[float] = []
        (root / "src" / "mod.py").write_text("a = 1\n")
        for _ in range(trials):
            started = time.perf_counter()
            await catalog.call_tool("count_lines", {"path": "src/mod.py"})
            direct.append(time.perf_counter() - started)
            await asyncio.sleep(PAUSE_S)
        engine = await open_recipes(project, catalog, guard=LoopGuard(max_runs=10_000, window_s=1.0))
        await engine.save_recipe("lines", RECIPE)
        results: asyncio.Queue[float] = asyncio.Queue()
        engine.add_listener(lambda event: results.put_nowait(time.perf_counter())
                            if isinstance(event, Notice) and event.message.startswith("recipe lines (file_changed)") else None)
        watcher = asyncio.create_task(engine.watch())
        await asyncio.wait_for(engine.watcher.ready.wait(), 10)
        recipe: list[float] = []
        for index in range(trials):
            started = time.perf_counter()
            (root / "src" / "mod.py").write_text("a = 1\n" * (index + 1))
            recipe.append((await asyncio.wait_for(results.get(), 20)) - started)
            await asyncio.sleep(PAUSE_S)
        watcher.cancel()
        await engine.aclose()
        await catalog.aclose()
        await sandbox.aclose()

    def ms(values: list[float], q: float) -> float:
        values = sorted(values)
        return values[min(len(values) - 1, int(q * len(values)))] * 1000

    print(f"trials: {trials}, sandbox tier: {sandbox.tier}")
    print(f"raw watchfiles event        p50 {ms(raw, 0.5):7.1f} ms   p95 {ms(raw, 0.95):7.1f} ms")
    print(f"direct catalog.call_tool    p50 {ms(direct, 0.5):7.1f} ms   p95 {ms(direct, 0.95):7.1f} ms")
    print(f"write → recipe result       p50 {ms(recipe, 0.5):7.1f} ms   p95 {ms(recipe, 0.95):7.1f} ms")
    overhead = statistics.median(recipe) - statistics.median(raw) - statistics.median(direct)
    print(f"ratio recipe / (watchfiles + call_tool) p50: {statistics.median(recipe) / (statistics.median(raw) + statistics.median(direct)):.2f}"
          f"  (engine overhead ≈ {overhead * 1000:.1f} ms)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=30)
    asyncio.run(main(parser.parse_args().trials))
