"""Benchmark: loading a 1,000-tool catalog cold (every tool validated in the sandbox) and warm (content-hash cache).

Prints the figures and the warm load's ratio against a baseline measured in the same run: just reading and
sha256-hashing the same 1,000 files. Target: warm load <= 1 s.

    .venv/bin/python benchmarks/bench_catalog_load.py [--tools 1000]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import subprocess
import tempfile
import time
from pathlib import Path

from tui_agent.core.catalog.api import Catalog
from tui_agent.core.project import Project
from tui_agent.core.sandbox import Sandbox

TOOL = '''DEPENDS_ON = ["src/*.py"]


def {name}(text: str, limit: int = 10, mode: str | None = None) -> list[str]:
    """Tool number {index}: split text into at most `limit` words.

    Args:
        text: the text to split
        limit: how many words to keep
        mode: unused option
    """
    return text.split()[:limit]


def test_{name}():
    assert {name}("a b c", limit=2) == ["a", "b"]
'''


def make_project(root: Path, count: int) -> Project:
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    for key, value in (("user.email", "bench@example.com"), ("user.name", "Bench"), ("commit.gpgsign", "false")):
        subprocess.run(["git", "config", key, value], cwd=root, check=True)
    tools = root / ".agent" / "tools"
    tools.mkdir(parents=True)
    for index in range(count):
        name = f"tool_{index:04d}"
        (tools / f"{name}.py").write_text(TOOL.format(name=name, index=index))
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("print('app')\n")
    subprocess.run(["git", "add", "."], cwd=root, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "a project with many tools"], cwd=root, check=True)
    return Project.at(root)


def baseline(project: Project) -> float:
    started = time.perf_counter()
    for path in sorted(project.tools_dir.glob("*.py")):
        hashlib.sha256(path.read_bytes()).hexdigest()
    return time.perf_counter() - started


async def load(project: Project, sandbox: Sandbox) -> tuple[float, Catalog]:
    started = time.perf_counter()
    catalog = await Catalog.open(project, sandbox)
    return time.perf_counter() - started, catalog


async def main(count: int) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-catalog-") as folder:
        project = make_project(Path(folder) / "project", count)
        sandbox = await Sandbox.start(project)
        try:
            cold, catalog = await load(project, sandbox)
            report = catalog.load_report
            assert len(report.validated) == count and not report.broken, report
            await catalog.aclose()
            warm_runs = []
            for _ in range(3):
                warm, catalog = await load(project, sandbox)
                assert len(catalog.load_report.cached) == count
                warm_runs.append(warm)
                listed_started = time.perf_counter()
                records = catalog.tools()
                listed = time.perf_counter() - listed_started
                assert len(records) == count
                await catalog.aclose()
            base = min(baseline(project) for _ in range(3))
        finally:
            await sandbox.aclose()
    warm = sorted(warm_runs)[len(warm_runs) // 2]
    print(f"tools: {count}  sandbox tier: {sandbox.tier}")
    print(f"cold load (validate all in the sandbox): {cold:.2f} s ({cold / count * 1000:.1f} ms per tool)")
    print(f"warm load (content-hash cache), median of 3: {warm * 1000:.0f} ms  [target <= 1000 ms: "
          f"{'PASS' if warm <= 1.0 else 'FAIL'}]")
    print(f"tools() listing with status: {listed * 1000:.0f} ms")
    print(f"baseline (read + sha256 of the {count} files): {base * 1000:.1f} ms")
    print(f"warm / baseline: {warm / base:.1f}x   cold / warm: {cold / warm:.0f}x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tools", type=int, default=1000)
    asyncio.run(main(parser.parse_args().tools))
