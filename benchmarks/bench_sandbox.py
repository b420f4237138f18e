"""Sandbox overhead: p50 of a trivial tool call, paced and back to back, beside same-run baselines.

Back to back means 20 calls in a row with no gap (a `run_python` loop): each a fresh sandbox, from the warm pool
(drained after two calls) or started as it is needed. The same 20 calls as one batched run (`ToolBatch`: one sandbox,
a forked child per call) are what one reply's back-to-back calls use. The baseline is `python -c pass`.
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tui_agent.core.project import Project
from tui_agent.core.sandbox import Sandbox, SandboxPolicy, ShellCommand, ToolBatch, ToolCall

ROUNDS = 40
BURST = 20
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
        await asyncio.sleep(1.0)  # the warm pool is up
        for index in range(ROUNDS):
            if paced:
                await asyncio.sleep(0.15)  # an agent turn's gap: the pool refills in the background
            elif index % BURST == 0:
                await asyncio.sleep(0.5)  # a new burst of 20 back-to-back calls
            started = time.perf_counter()
            result = await box.run(ToolCall("ping", "ping", {"x": 1}, str(project.tool_path("ping"))),
                                   SandboxPolicy(project_writable=False))  # a tool without WRITES
            samples.append((time.perf_counter() - started) * 1000)
            assert result.ok and result.value == 1, result
    finally:
        await box.aclose()
    return samples


async def batched(project: Project) -> list[float]:
    """Per call: bursts of 20 calls, each burst one batched run under bubblewrap."""
    box = await Sandbox.start(project, tier="bubblewrap", warm_workers=2)
    call = ToolCall("ping", "ping", {"x": 1}, str(project.tool_path("ping")))
    samples = []
    try:
        await asyncio.sleep(1.0)
        for _ in range(ROUNDS // 2):
            await asyncio.sleep(0.5)
            started = time.perf_counter()
            results = await box.run(ToolBatch((call,) * BURST), SandboxPolicy(project_writable=False))
            samples.append((time.perf_counter() - started) * 1000 / BURST)
            assert all(result.ok and result.value == 1 for result in results), results
    finally:
        await box.aclose()
    return samples


async def shell_true(project: Project, gap_s: float) -> dict[str, list[float]]:
    """run_shell('true') (the project writable), alternating runs through an overlay (exact undo attribution) with
    runs forked without one (what writable runs did before), so both see the same machine load."""
    box = await Sandbox.start(project, tier="bubblewrap", warm_workers=2)
    samples: dict[str, list[float]] = {"overlay": [], "no overlay": []}
    try:
        await asyncio.sleep(1.0)
        for index in range(ROUNDS):
            kind = "overlay" if index % 2 else "no overlay"
            box.runs.overlay_problem = None if kind == "overlay" else "off for the comparison"
            await asyncio.sleep(gap_s)
            started = time.perf_counter()
            result = await box.run(ShellCommand("true", 10), SandboxPolicy())
            samples[kind].append((time.perf_counter() - started) * 1000)
            assert result.ok, result
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
        figures["bubblewrap back-to-back, one batch (per call)"] = p50(asyncio.run(batched(project)))
        for label, gap in (("paced", 0.15), ("back-to-back", 0.0)):
            for kind, samples in asyncio.run(shell_true(project, gap)).items():
                figures[f"run_shell('true') {label}, {kind}"] = p50(samples)
    print(f"p50 over {ROUNDS} calls (ms), ratio against a fresh `python -c pass` measured in the same run:")
    for name, value in figures.items():
        print(f"  {name:45s} {value:7.2f} ms   x{value / baseline:.2f}")
    target = figures["sandbox bubblewrap, warm pool, paced calls"]
    print(f"target: trivial call with full isolation p50 <= 15 ms: {'met' if target <= 15 else 'NOT met'} ({target:.2f} ms)")
    burst, batch = figures["sandbox bubblewrap, back-to-back calls"], figures["bubblewrap back-to-back, one batch (per call)"]
    print(f"back-to-back (bursts of {BURST}): {burst:.2f} ms each in a sandbox of its own, {batch:.2f} ms per call "
          f"batched (one reply's calls); target p50 <= 8 ms batched: {'met' if batch <= 8 else 'NOT met'}")


if __name__ == "__main__":
    main()
