"""How many modules of `tui_agent/core/sandbox/` one writable `run_shell`-shaped call executes code in (issue 33's
"a run_shell call passes at most N modules"): the host's (sys.setprofile on every thread, the warm worker the call's
refill starts included) and the sandboxed processes' (the files they open, from strace, when it is installed).

    strace -f -qq -e trace=openat -o /tmp/run_shell.strace .venv/bin/python benchmarks/bench_run_shell_modules.py
    .venv/bin/python benchmarks/bench_run_shell_modules.py --strace /tmp/run_shell.strace

The first prints the host's modules (and, apart, every tui_agent module outside the sandbox package the call runs
code in); the second reads the log and prints the modules the sandboxed workers opened (a writable run_shell runs in
one).
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tui_agent.core.project import Project  # noqa: E402
from tui_agent.core.sandbox import Sandbox, SandboxPolicy, ShellCommand  # noqa: E402

PACKAGE = "/core/sandbox/"
OUTSIDE = "/tui_agent/"
seen: set[str] = set()
seen_outside: set[str] = set()


def profile(frame: FrameType, _event: str, _arg: Any) -> None:
    path = frame.f_code.co_filename
    if PACKAGE in path:
        seen.add(os.path.basename(path))
    elif OUTSIDE in path:
        seen_outside.add(path[path.index(OUTSIDE) + len(OUTSIDE):])


async def host_modules(root: Path) -> set[str]:
    sandbox = await Sandbox.start(Project(root))
    policy = SandboxPolicy(timeout_s=20.0, cpu_s=20, output_bytes=200_000, project_writable=True)
    try:
        assert (await sandbox.run(ShellCommand("echo warm", 10), policy)).ok
        await asyncio.sleep(3)  # the warm pool settles
        # threads started after the profile is set: the default executor's are made anew
        asyncio.get_running_loop().set_default_executor(concurrent.futures.ThreadPoolExecutor())
        threading.setprofile(profile)
        sys.setprofile(profile)
        result = await sandbox.run(ShellCommand("echo hi", 10), policy)
        refill = sandbox.dispatch.warm._refill  # the next warm worker, started because of this call
        if refill is not None:
            await refill
        sys.setprofile(None)
        threading.setprofile(None)
        assert result.ok, result
    finally:
        await sandbox.aclose()
    return set(seen)


def sandboxed_modules(log: Path) -> set[str]:
    """The modules the sandboxed workers opened."""
    lines = log.read_text().splitlines()
    host = lines[0].split()[0]
    opened: dict[str, set[str]] = {}
    for line in lines:
        match = re.search(r'core/sandbox/(?:__pycache__/)?(\w+)\.(?:cpython-\d+\.)?pyc?"', line)
        pid = line.split()[0]
        if match and pid != host and "= -1" not in line:
            opened.setdefault(pid, set()).add(match.group(1) + ".py")
    return set().union(*opened.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--strace", type=Path, help="print the modules the sandboxed processes opened in this log")
    args = parser.parse_args()
    if args.strace is not None:
        workers = sandboxed_modules(args.strace)
        print(f"fresh workers: {len(workers)} modules: {', '.join(sorted(workers))}")
        return
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "project"
        root.mkdir()
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        found = asyncio.run(host_modules(root))
    print(f"host: {len(found)} modules: {', '.join(sorted(found))}")
    print(f"outside the sandbox package, on the host: {len(seen_outside)} modules: {', '.join(sorted(seen_outside))}")


if __name__ == "__main__":
    main()
