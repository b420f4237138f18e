"""Sandbox overhead: p50 of a trivial tool call through the warm pool, beside `python -c pass` and a no-sandbox subprocess."""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tui_agent.core.project import Project
from tui_agent.core.sandbox import Sandbox

ROUNDS = 40
TOOL = "def ping(x: int) -> int:\n    \"\"\"Echo.\"\"\"\n    return x\n"


def p50(samples: list[float]) -> float:
    return statistics.median(samples)


def fresh_python() -> list[float]:
    samples = []
    for _ in range(ROUNDS):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def no_sandbox_subprocess(tool: Path) -> list[float]:
    code = (f"import importlib.util, json; s = importlib.util.spec_from_file_location('ping', {str(tool)!r}); "
            "m = importlib.util.module_from_spec(s); s.loader.exec_module(m); print(json.dumps(m.ping(1)))")
    samples = []
    for _ in range(ROUNDS):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-I", "-c", code], check=True, capture_output=True)
        samples.append((time.perf_counter() - started) * 1000)
    return samples


async def sandboxed(project: Project, tier: str, *, paced: bool) -> list[float]:
    box = await Sandbox.start(project, tier=tier, warm_workers=2)
    samples = []
    try:
        for _ in range(ROUNDS):
            if paced:
                await asyncio.sleep(0.15)  # an agent turn's gap: the pool refills in the background
            started = time.perf_counter()
            result = await box.call_function(module="ping", function="ping", kwargs={"x": 1},
                                             module_path=project.tool_path("ping"))
            samples.append((time.perf_counter() - started) * 1000)
            assert result.ok and result.value == 1, result
    finally:
        await box.aclose()
    return samples


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        project = Project.at(folder)
        project.ensure_layout()
        project.tool_path("ping").write_text(TOOL)
        baseline = p50(fresh_python())
        plain = p50(no_sandbox_subprocess(project.tool_path("ping")))
        figures = {
            "python -c pass (fresh)": baseline,
            "no-sandbox subprocess tool call": plain,
        }
        for tier in ("bubblewrap", "rlimits"):
            figures[f"sandbox {tier}, warm pool, paced calls"] = p50(asyncio.run(sandboxed(project, tier, paced=True)))
            figures[f"sandbox {tier}, back-to-back calls"] = p50(asyncio.run(sandboxed(project, tier, paced=False)))
    print(f"p50 over {ROUNDS} calls (ms), ratio against a fresh `python -c pass` measured in the same run:")
    for name, value in figures.items():
        print(f"  {name:45s} {value:7.2f} ms   x{value / baseline:.2f}")
    target = figures["sandbox bubblewrap, warm pool, paced calls"]
    print(f"target: trivial call with full isolation p50 <= 15 ms: {'met' if target <= 15 else 'NOT met'} ({target:.2f} ms)")


if __name__ == "__main__":
    main()
