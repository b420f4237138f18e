"""Benchmark: `tuiagent -p hi` in a repository with many untracked files, against `git status` on the same tree.

Three projects: 40,000 untracked files (400 folders of 100), the same files ignored by `.gitignore`, and no extra
files at all. In each, `tuiagent -p hi --trust-project` against a local Messages API answering at once
(tests/fake_messages_api.py) and `git status` (its default: untracked folders shown, not walked file by file)
alternate, so a busy machine weighs on each alike; medians of wall and CPU time (user + system of the process and
the children it waited for) are printed, and tuiagent's time beyond the same command in the project without the
files, beside `git status`'s. The first `-p hi` in each project (fresh caches: every untracked file is hashed once
for undo's checkpoint) is printed apart. `--compare DIR` also runs the tuiagent of another checkout (its tree on
PYTHONPATH), alternated with this one.

    .venv/bin/python benchmarks/bench_untracked.py [--files 40000] [--runs 7] [--compare /path/to/other/checkout]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_headless import timed  # noqa: E402
from bench_startup import Server  # noqa: E402
from tests.gitrepo import git, init_repo  # noqa: E402

PYTHON = sys.executable


def make_project(path: Path, files: int, ignored: bool) -> Path:
    project = init_repo(path)
    if ignored:
        (project / ".gitignore").write_text("gen/\n")
        git(project, "add", ".gitignore")
        git(project, "commit", "-q", "-m", "ignore gen/")
    for number in range(files):
        folder = project / "gen" / f"d{number // 100}"
        if number % 100 == 0:
            folder.mkdir(parents=True)
        (folder / f"f{number % 100}.txt").write_text(f"file {number}\n")
    return project


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=40_000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--compare", type=Path, help="another checkout of tuiagent, run alternated with this one")
    options = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-untracked-"))
    projects = {"untracked": make_project(folder / "untracked", options.files, False),
                "ignored": make_project(folder / "ignored", options.files, True),
                "none": make_project(folder / "none", 0, False)}
    server = Server(folder)
    env = {**os.environ, "ANTHROPIC_API_KEY": "bench", "ANTHROPIC_BASE_URL": server.base_url,
           "XDG_CACHE_HOME": str(folder / "cache")}
    codes = {"this": str(ROOT), **({"compare": str(options.compare.resolve())} if options.compare else {})}
    commands: dict[str, tuple[list[str], dict[str, str], Path]] = {}
    for kind, project in projects.items():
        for code, path in codes.items():
            commands[f"{code} {kind}"] = ([PYTHON, "-m", "tui_agent.cli", "--project", str(project), "-p", "hi",
                                           "--trust-project"], {**env, "PYTHONPATH": path}, project)
        commands[f"git {kind}"] = (["git", "status"], env, project)
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    try:
        subprocess_compile()
        for name, (command, command_env, cwd) in commands.items():
            first = timed(command, command_env, cwd)  # creates .agent/, hashes the untracked files once
            print(f"  first run  {name:<20}{first[0] * 1000:7.0f}ms wall {first[1] * 1000:7.0f}ms CPU")
        for _ in range(options.runs):
            for name, (command, command_env, cwd) in commands.items():
                times[name].append(timed(command, command_env, cwd))
    finally:
        server.stop()
    report(times, options, codes)


def subprocess_compile() -> None:
    """Bytecode for this checkout's modules, so no measured start compiles them (PYTHONDONTWRITEBYTECODE may be set)."""
    import compileall

    compileall.compile_dir(str(ROOT / "tui_agent"), quiet=1)


def report(times: dict[str, list[tuple[float, float]]], options: argparse.Namespace, codes: dict[str, str]) -> None:
    wall = {name: statistics.median(run[0] for run in runs) for name, runs in times.items()}
    cpu = {name: statistics.median(run[1] for run in runs) for name, runs in times.items()}
    print(f"{options.files} files, median of {options.runs} alternated runs (load average {os.getloadavg()[0]:.1f}):")
    print(f"  {'':<40}{'wall':>8}{'CPU':>8}{'wall beyond none':>18}{'CPU beyond none':>17}")
    for name in times:
        code, kind = name.split(" ")
        base = f"{code} none"
        extra = "" if kind == "none" else f"{(wall[name] - wall[base]) * 1000:16.0f}ms{(cpu[name] - cpu[base]) * 1000:15.0f}ms"
        label = f"git status ({kind})" if code == "git" else f"tuiagent -p hi ({kind}, {code})"
        print(f"  {label:<40}{wall[name] * 1000:6.0f}ms{cpu[name] * 1000:6.0f}ms{extra}")
    for code in codes:
        for kind in ("untracked", "ignored"):
            ratio = wall[f"{code} {kind}"] / wall[f"{code} none"]
            print(f"  {code}: -p hi with {kind} files / without: {ratio:.2f}× wall")


if __name__ == "__main__":
    from trusted_temp import trust_temporary_projects

    trust_temporary_projects()
    main()
