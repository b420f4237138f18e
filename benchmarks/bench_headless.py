"""Benchmark: headless start-up against the SDK's floor, in the same run.

`tuiagent -p hi` against a local Messages API (tests/fake_messages_api.py, answering at once), from process start to
exit, beside `import anthropic` plus one streamed request through the SDK to the same server in a fresh interpreter
(the floor of any program using the SDK), and the same floor ending in `os._exit(0)` (tuiagent also skips the
interpreter's teardown once nothing is left running). The three commands alternate, so a busy machine weighs on
each alike; the medians and the ratios are printed, of the wall time and of the CPU time (user + system, the
process and every child it waited for: git, bubblewrap, the sandbox worker), which a busy machine disturbs far less. The project is a fresh repository, so it opens restricted (not
trusted: no catalog, recipes or MCP servers) unless `--trusted` passes `--trust-project` (a trusted project's start).

    .venv/bin/python benchmarks/bench_headless.py [--runs 15] [--trusted] [--compare TREE]
"""

from __future__ import annotations

import argparse
import compileall
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_startup import FROM_TREE, SDK_FLOOR, SDK_FLOOR_NO_TEARDOWN, Server  # noqa: E402
from tests.gitrepo import init_repo  # noqa: E402

PYTHON = sys.executable


def timed(command: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """Wall and CPU seconds of one run (CPU: user + system of the command and the children it waited for)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, timeout=120)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"{command[:4]} failed: {done.stderr[-2000:]}")
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--trusted", action="store_true", help="run tuiagent with --trust-project")
    parser.add_argument("--compare", type=Path, help="also another tuiagent source tree (the folder holding tui_agent/)")
    options = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-headless-"))
    project = init_repo(folder / "project")
    server = Server(folder)
    env = {**os.environ, "ANTHROPIC_API_KEY": "bench", "ANTHROPIC_BASE_URL": server.base_url}
    commands = {
        "tuiagent": [PYTHON, "-m", "tui_agent.cli", "--project", str(project), "-p", "hi",
                     *(["--trust-project"] if options.trusted else [])],
        **({"compare": [PYTHON, "-c", FROM_TREE, str(options.compare), "--project", str(project), "-p", "hi",
                        *(["--trust-project"] if options.trusted else [])]} if options.compare else {}),
        "floor": [PYTHON, "-c", SDK_FLOOR, server.base_url],
        "floor_no_teardown": [PYTHON, "-c", SDK_FLOOR_NO_TEARDOWN, server.base_url],
    }
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    try:
        for tree in (ROOT, *([options.compare] if options.compare else [])):
            compileall.compile_dir(str(tree / "tui_agent"), quiet=1)  # as on a person's machine: no start compiles
        timed(commands["tuiagent"], env, project)  # the first run creates .agent/ and warms the OS caches
        for _ in range(options.runs):
            for name, command in commands.items():
                times[name].append(timed(command, env, project))
    finally:
        server.stop()
    wall = {name: statistics.median(run[0] for run in runs) for name, runs in times.items()}
    cpu = {name: statistics.median(run[1] for run in runs) for name, runs in times.items()}
    print(f"headless start-up, median of {options.runs} alternated runs (load average {os.getloadavg()[0]:.1f}):")
    label = "tuiagent -p hi --trust-project" if options.trusted else "tuiagent -p hi (restricted)"
    print(f"  {'':<50}{'wall':>7}{'ratio':>7}{'CPU':>9}{'ratio':>7}")
    rows = [(label, "tuiagent"), *([(f"the same from {options.compare}", "compare")] if options.compare else []),
            ("import anthropic + one streamed request", "floor"),
            ("the same, ending in os._exit(0) (no teardown)", "floor_no_teardown")]
    for text, name in rows:
        ratio = "" if name in ("tuiagent", "compare") else f"{wall['tuiagent'] / wall[name]:7.2f}"
        cpu_ratio = "" if name in ("tuiagent", "compare") else f"{cpu['tuiagent'] / cpu[name]:7.2f}"
        print(f"  {text:<50}{wall[name] * 1000:5.0f}ms{ratio:>7}{cpu[name] * 1000:7.0f}ms{cpu_ratio:>7}")
    if options.compare:
        print(f"  {options.compare}: {wall['compare'] / wall['floor']:.2f}× the SDK floor, "
              f"{wall['compare'] / wall['floor_no_teardown']:.2f}× without its teardown (CPU "
              f"{cpu['compare'] / cpu['floor']:.2f}×, {cpu['compare'] / cpu['floor_no_teardown']:.2f}×)")

if __name__ == "__main__":
    from trusted_temp import trust_temporary_projects

    trust_temporary_projects()
    main()
