"""Benchmark: a cold catalog (a fresh clone, no state.db) — launch to first prompt received, beside same-run baselines.

For N tools (300 and 1,000 by default), a repository whose catalog holds N committed tools is cloned afresh for
every run; then:

1. Launch to first prompt: `tuiagent --project CLONE -p hi` against the local Messages API server
   (tests/fake_messages_api.py), from process start until the server receives the request. Every tool is
   validated (imported and tested, each in its own sandboxed process) before the request goes out.
2. The catalog open alone, in-process (`Catalog.open` on another fresh clone, sandbox already started).
3. Baseline: the same validation (the same inspector on the same N files) done in ONE sandboxed process, with
   no isolation between the tools.

    .venv/bin/python benchmarks/bench_cold_open.py [--tools 300 1000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_catalog_load import make_project  # noqa: E402
from tui_agent.core.catalog.api import Catalog  # noqa: E402
from tui_agent.core.project import Project  # noqa: E402
from tui_agent.core.sandbox import Sandbox, SandboxPolicy, Snippet  # noqa: E402

ONE_PROCESS = """
import os
from tui_agent.core.catalog.inspector import inspect_tool_file
folder = '.agent/tools'
results = [inspect_tool_file(os.path.join(folder, name), name[:-3]) for name in sorted(os.listdir(folder)) if name.endswith('.py')]
sum(1 for result in results if result['ok'])
"""


def fresh_clone(origin: Path, target: Path) -> Path:
    subprocess.run(["git", "clone", "-q", str(origin), str(target)], check=True)
    for key, value in (("user.email", "bench@example.com"), ("user.name", "Bench")):
        subprocess.run(["git", "config", key, value], cwd=target, check=True)
    return target


def launch_to_prompt(clone: Path, folder: Path) -> tuple[float, int]:
    """Seconds from `tuiagent -p` starting to the server receiving its request; the tools validated in state.db."""
    script, log = folder / "script.json", folder / "requests.log"
    script.write_text(json.dumps([{"repeat": {"text": "hello"}}]))
    log.unlink(missing_ok=True)
    server = subprocess.Popen([sys.executable, str(ROOT / "tests" / "fake_messages_api.py"), "--script", str(script),
                               "--log", str(log)], stdout=subprocess.PIPE, text=True)
    assert server.stdout is not None
    base_url = server.stdout.readline().strip().removeprefix("listening on ")
    env = {**os.environ, "ANTHROPIC_API_KEY": "bench", "ANTHROPIC_BASE_URL": base_url}
    try:
        started = time.perf_counter()
        agent = subprocess.Popen([sys.executable, "-m", "tui_agent.cli", "--project", str(clone), "-p", "hi"], env=env,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        while not (log.exists() and log.read_text()):
            if agent.poll() is not None:
                raise RuntimeError(f"tuiagent exited first: {agent.stderr.read() if agent.stderr else ''}")
            time.sleep(0.002)
        received = time.perf_counter() - started
        agent.communicate(timeout=120)
    finally:
        server.terminate()
        server.wait()
    listed = subprocess.run([sys.executable, "-m", "tui_agent.cli", "--project", str(clone), "tools", "list", "--json"],
                            capture_output=True, text=True, env=env)
    count = len(json.loads(listed.stdout)) if listed.returncode == 0 else -1
    return received, count


async def catalog_open(clone: Path) -> float:
    project = Project.at(clone)
    sandbox = await Sandbox.start(project)
    try:
        await asyncio.sleep(1.0)  # the warm workers are up, as they are by the time a launched app opens its catalog
        started = time.perf_counter()
        catalog = await Catalog.open(project, sandbox)
        elapsed = time.perf_counter() - started
        assert not catalog.load_report.broken, catalog.load_report.broken[:5]
        await catalog.aclose()
        return elapsed
    finally:
        await sandbox.aclose()


async def one_process(clone: Path, count: int) -> float:
    project = Project.at(clone)
    sandbox = await Sandbox.start(project)
    try:
        await asyncio.sleep(1.0)
        started = time.perf_counter()
        result = await sandbox.run(Snippet(ONE_PROCESS), SandboxPolicy(timeout_s=600, cpu_s=600, project_writable=False))
        elapsed = time.perf_counter() - started
        assert result.ok and result.value == count, result
        return elapsed
    finally:
        await sandbox.aclose()


def bench(count: int) -> None:
    folder = Path(tempfile.mkdtemp(prefix="bench-cold-"))
    try:
        origin = folder / "origin"
        make_project(origin, count)
        baseline = asyncio.run(one_process(fresh_clone(origin, folder / "clone-base"), count))
        opened = asyncio.run(catalog_open(fresh_clone(origin, folder / "clone-open")))
        received, listed = launch_to_prompt(fresh_clone(origin, folder / "clone-launch"), folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(f"{count} tools, fresh clone (no state.db):")
    print(f"  launch -> first prompt received by the server: {received:6.2f} s   ({listed} tools in the catalog afterwards)")
    print(f"  catalog open alone (each tool isolated):       {opened:6.2f} s   {opened / baseline:5.1f}x the baseline")
    print(f"  baseline, the same validation in one process:  {baseline:6.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tools", type=int, nargs="+", default=[300, 1000])
    for count in parser.parse_args().tools:
        bench(count)


if __name__ == "__main__":
    from trusted_temp import trust_temporary_projects

    trust_temporary_projects()
    main()
