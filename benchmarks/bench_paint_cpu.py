"""Benchmark: CPU time from process start to the first frame, the TUI beside a bare Textual app, in tmux.

`bench_startup.py --only paint` measures wall time, which on a shared machine mostly measures the other
processes (the bare app took 160 ms idle and 550-1000 ms at load 5-10). This counts the CPU the process itself
used (`time.process_time()`, every thread) until the first frame was drawn: each app records it in a callback
queued from its `on_mount` with `call_after_refresh` (run once the first refresh is written to the terminal), then
exits. Both run as `tuiagent` and `python -c` run them (the console entry, so with what it does at start), in a
160x48 tmux window, alternated, N runs each; `--compare PATH` adds another tuiagent tree (e.g. a checkout of main).

    .venv/bin/python benchmarks/bench_paint_cpu.py [--runs 15] [--compare /path/to/other/tree]
"""

from __future__ import annotations

import argparse
import compileall
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.gitrepo import init_repo  # noqa: E402

BARE = """
import sys, time
from textual.app import App
from textual.widgets import Input
class Bare(App):
    def compose(self):
        yield Input(placeholder="bare-ready")
    def on_mount(self):
        self.call_after_refresh(self.done)
    def done(self):
        open(sys.argv[1], "a").write(f"{time.process_time() * 1000:.1f}\\n")
        self.exit()
Bare().run()
"""
# the tree given first on sys.path (an editable install's finder removed), the first frame recorded, then quit
OURS = """
import sys, time
root, project, out = sys.argv[1:4]
sys.meta_path = [f for f in sys.meta_path if "editable" not in getattr(type(f), "__module__", "") + getattr(f, "__module__", "")]
sys.path.insert(0, root)
import tui_agent.ui.app as app_module
mount = app_module.TuiAgentApp.on_mount
def on_mount(self):
    self.call_after_refresh(lambda: open(out, "a").write(f"{time.process_time() * 1000:.1f}\\n"))
    mount(self)
app_module.TuiAgentApp.on_mount = on_mount
app_module.TuiAgentApp.open_runtime = lambda self: self.exit(0)
import tui_agent.cli as cli
sys.argv = ["tuiagent", "--project", project]
cli.entry()
"""


def cpu_ms(command: list[str], cwd: Path, out: Path) -> float:
    """Run `command` in a fresh tmux window; the CPU milliseconds it wrote to `out` at its first frame."""
    before = len(out.read_text().splitlines()) if out.exists() else 0
    socket = f"bench-cpu-{os.getpid()}-{uuid.uuid4().hex[:6]}"
    env = {"TERM": "xterm-256color", "COLORTERM": "truecolor", "ANTHROPIC_API_KEY": "", "ANTHROPIC_BASE_URL": "",
           "XDG_CONFIG_HOME": os.environ["XDG_CONFIG_HOME"]}
    exports = " ".join(f"{key}={shlex.quote(value)}" for key, value in env.items())
    shell = f"cd {shlex.quote(str(cwd))} && env -u COLUMNS -u LINES {exports} {shlex.join(command)}; sleep 30"
    tmux_env = {key: value for key, value in os.environ.items() if key not in ("COLUMNS", "LINES", "TMUX")}
    subprocess.run(["tmux", "-L", socket, "new-session", "-d", "-x", "160", "-y", "48", "-s", "bench", shell], env=tmux_env, check=True)
    try:
        deadline = time.monotonic() + 60
        while not (out.exists() and len(out.read_text().splitlines()) > before):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{command[:3]} never drew its first frame")
            time.sleep(0.02)
        return float(out.read_text().splitlines()[-1])
    finally:
        subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True, timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--compare", type=Path, help="another tuiagent source tree (the folder holding tui_agent/)")
    args = parser.parse_args()
    trees = {"tuiagent": ROOT, **({"compared": args.compare.resolve()} if args.compare else {})}
    for tree in trees.values():  # as after a first start: bytecode written (PYTHONDONTWRITEBYTECODE=1 here)
        compileall.compile_dir(tree / "tui_agent", quiet=1)
    folder = Path(tempfile.mkdtemp(prefix="bench-paint-cpu-"))
    try:
        project = init_repo(folder / "project")
        results: dict[str, list[float]] = {"bare": [], **{name: [] for name in trees}}
        for _ in range(args.runs):
            results["bare"].append(cpu_ms([sys.executable, "-c", BARE, str(folder / "bare.txt")], project, folder / "bare.txt"))
            for name, tree in trees.items():
                out = folder / f"{name}.txt"
                results[name].append(cpu_ms([sys.executable, "-c", OURS, str(tree), str(project), str(out)], project, out))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    bare = statistics.median(results["bare"])
    print(f"CPU time from process start to the first frame, in tmux (median of {args.runs}; load average {os.getloadavg()[0]:.1f}):")
    print(f"  bare Textual app            {bare:6.0f} ms")
    for name in trees:
        ours = statistics.median(results[name])
        ratios = [mine / theirs for mine, theirs in zip(results[name], results["bare"], strict=True)]
        print(f"  {name:<26}  {ours:6.0f} ms   {ours / bare:4.2f}x bare; median of the runs' ratios {statistics.median(ratios):.2f}x")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from trusted_temp import trust_temporary_projects

    trust_temporary_projects()
    main()
