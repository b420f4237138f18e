"""CLI commands beside an open runtime (what the TUI holds: catalog, watcher, drift watch) while tools are edited:
every command ends within its bound. `TUIAGENT_STRESS_RUNS=300` runs it hundreds of times."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.catalog_support import tool_source
from tests.gitrepo import git

BOUND_S = 60.0
RUNS = int(os.environ.get("TUIAGENT_STRESS_RUNS", "12"))

HOLDER = textwrap.dedent("""
    import asyncio, sys
    from tui_agent.core.runtime import open_runtime

    async def main() -> None:
        async def approve(*_args, **_kwargs):
            return True
        runtime = await open_runtime(sys.argv[1], approve=approve)
        print("open", flush=True)
        try:
            await asyncio.sleep(3600)
        finally:
            await runtime.aclose()

    asyncio.run(main())
""")


@pytest.mark.timeout(60 + RUNS * 2 * int(BOUND_S))
def test_cli_commands_beside_an_open_runtime_never_exceed_their_bound(repo: Path) -> None:
    tools_dir = repo / ".agent" / "tools"
    tools_dir.mkdir(parents=True)
    (tools_dir / "double.py").write_text(tool_source("double", test="assert double(1) == 2",
                                                     extra='DEPENDS_ON = ["data/*.txt"]\n'))
    (repo / "data").mkdir()
    (repo / "data" / "a.txt").write_text("1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a tool")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(repo)], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True, start_new_session=True)
    slowest = 0.0
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "open"
        commands = [("list", "--json"), ("show", "double", "--json"), ("drift", "--json"), ("history", "double")]
        for run in range(RUNS):
            if run % 3 == 0:  # a person saving the tool, and a dependency changing, while commands run
                (tools_dir / "double.py").write_text(tool_source("double", f"return 2 * x + {run} - {run}",
                                                                 test="assert double(1) == 2",
                                                                 extra='DEPENDS_ON = ["data/*.txt"]\n'))
                (repo / "data" / f"{run}.txt").write_text(f"{run}\n")
            argv = commands[run % len(commands)]
            started = time.monotonic()
            try:
                done = subprocess.run([sys.executable, "-m", "tui_agent.cli", "--project", str(repo), "tools", *argv],
                                      env=env, capture_output=True, text=True, timeout=BOUND_S)
            except subprocess.TimeoutExpired:
                pytest.fail(f"run {run}: `tuiagent tools {' '.join(argv)}` did not end within {BOUND_S:.0f} s")
            slowest = max(slowest, time.monotonic() - started)
            assert done.returncode == 0, (run, argv, done.stderr)
        assert holder.poll() is None, "the open runtime died"
    finally:
        os.killpg(holder.pid, signal.SIGTERM)
        holder.wait(timeout=30)
    assert slowest < BOUND_S
