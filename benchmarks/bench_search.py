"""Benchmark: the grep and list_files built-ins beside `rg` run directly, on a generated project of a real repo's shape.

Method: a temporary git repository with N tracked source files in nested packages, a git-ignored `node_modules` and
`.venv` (many more files each), and a `.agent/` holding big session and run logs. Each search runs through the
built-in tool (ToolContext + handler, as the agent calls it) and, in the same run, as the equivalent plain `rg`
command in a subprocess, its output read through a pipe (rg stops at the first match when its output is /dev/null) (`rg PATTERN`, `rg -l`, `rg -c`, `rg --files`; with `--sortr modified` where the tool's answer
is sorted newest first, so both give the same list); both are timed over several trials, median reported. The tool must stay within 2x of rg for each search. `--fallback` times the pathspec walk instead
(no target: it is the correctness fallback for machines without rg).

Run: .venv/bin/python benchmarks/bench_search.py [--tracked 13700] [--ignored 31000] [--trials 5] [--fallback]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tui_agent.core.agent.permissions import Permissions, approve_all  # noqa: E402
from tui_agent.core.agent.search_tools import grep, list_files  # noqa: E402
from tui_agent.core.agent.toolbase import ToolContext  # noqa: E402
from tui_agent.core.project import Project  # noqa: E402

SOURCE = '''"""Module {n}."""

import os


class Model{n}:
    def model_validate(self, value: int) -> int:
        return value + {n}


def helper_{n}(path: str) -> str:
    # TODO: check {n}
    return os.path.join(path, "{n}")
'''


def generate(root: Path, tracked: int, ignored: int) -> None:
    for n in range(tracked):
        folder = root / "src" / f"pkg{n % 40}" / f"sub{n % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"mod{n}.py").write_text(SOURCE.format(n=n))
    for n in range(ignored):
        where = "node_modules" if n % 3 else ".venv/lib/site-packages"
        folder = root / where / f"dep{n % 300}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"f{n}.js").write_text(f"function model_validate_{n}() {{ return {n}; }}\n" * 5)
    (root / ".gitignore").write_text("node_modules/\n.venv/\n")
    sessions = root / ".agent" / "sessions"
    sessions.mkdir(parents=True)
    (root / ".agent" / ".gitignore").write_text("sessions/\nruns/\ncache/\nstate.db*\n")
    for n in range(20):
        (sessions / f"s{n}.jsonl").write_text('{"pattern": "def model_validate"}\n' * 5000)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "init"], cwd=root, check=True)


CASES: list[tuple[str, str, dict[str, Any], list[str]]] = [
    ("grep content (500 lines shown)", "grep", {"pattern": "def model_validate"}, ["def model_validate"]),
    ("grep files_with_matches", "grep", {"pattern": "TODO: check 77", "output_mode": "files_with_matches"}, ["-l", "--sortr", "modified", "TODO: check 77"]),
    ("grep count, -i, type py", "grep", {"pattern": "class model1", "-i": True, "type": "py", "output_mode": "count"},
     ["-c", "-i", "-t", "py", "class model1"]),
    ("grep -C 2, glob", "grep", {"pattern": "helper_123\\b", "-C": 2, "glob": "src/**/*.py"}, ["-C", "2", "-g", "src/**/*.py", "helper_123\\b"]),
    ("list_files **/*.py (mtime sort)", "list_files", {"pattern": "**/*.py"}, ["--files", "--sortr", "modified", "-g", "**/*.py"]),
]


def median_time(action: Any, trials: int) -> float:
    times = []
    for _ in range(trials):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tracked", type=int, default=13_700)
    parser.add_argument("--ignored", type=int, default=31_000)
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--fallback", action="store_true")
    options = parser.parse_args()
    rg = shutil.which("rg")
    if rg is None:
        sys.exit("rg is not installed: nothing to compare with")
    if options.fallback:
        os.environ["TUIAGENT_SEARCH"] = "fallback"
    with tempfile.TemporaryDirectory() as temp:
        root = Path(temp) / "project"
        root.mkdir()
        generate(root, options.tracked, options.ignored)
        context = ToolContext(Project.at(root), Permissions("ask", approve_all), call_id="b", tool_name="bench")
        loop = asyncio.new_event_loop()
        print(f"{options.tracked} tracked files, {options.ignored} ignored, engine: {'fallback' if options.fallback else 'rg'}")
        print(f"{'search':34} {'tool':>9} {'rg':>9} {'ratio':>6}")
        for label, tool, args, rg_args in CASES:
            handler = grep if tool == "grep" else list_files
            tool_s = median_time(lambda h=handler, a=args: loop.run_until_complete(h(context, a)), options.trials)  # type: ignore[misc]
            rg_s = median_time(lambda r=rg_args: subprocess.run([rg, *r], cwd=root, capture_output=True, check=False), options.trials)  # type: ignore[misc]
            ratio = tool_s / rg_s
            verdict = "" if options.fallback else ("ok" if ratio <= 2 else "OVER 2x")
            print(f"{label:34} {tool_s * 1000:8.1f}ms {rg_s * 1000:8.1f}ms {ratio:5.2f}x {verdict}")
        loop.close()


if __name__ == "__main__":
    main()
