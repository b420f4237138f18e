"""Benchmark: what a person waits for at launch, from process start, in a real terminal (tmux), beside same-run baselines.

1. First paint of the TUI: from starting `python -m tui_agent.cli` in a fresh tmux window (interpreter start and
   every import included) until the window shows the prompt box. Baseline: a bare Textual app (one `Input`) started
   the same way, until its placeholder shows. Alternated, median of N runs each.
2. A prompt typed at once: the person types a prompt and presses Enter as soon as the prompt box shows; time from
   process start until the local Messages API server (tests/fake_messages_api.py) receives it (with --tools, also
   the app process's CPU time by then, which a busy machine disturbs far less). Baseline: the bare
   app's first paint (the floor for any Textual program).
3. Headless `tuiagent -p "hi"` against that local server (answering at once): process start to exit. Baselines:
   `python -c "import anthropic"` plus one streamed request through the SDK to the same server (the floor for any
   program using the SDK), and the same script ending in `os._exit(0)` (no interpreter teardown: the floor for a
   program that skips it, as `tuiagent` does once nothing is left running).
4. Memory of the idle tree: the TUI started as in 1 with a model configured, left idle until the header says
   nothing is loading and then 5 s more; the proportional set size (PSS, /proc/PID/smaps_rollup) of the app and
   every process under it (the sandbox's warm workers included). Baseline: the bare Textual app's PSS.

    .venv/bin/python benchmarks/bench_startup.py [--runs 5] [--only paint|prompt|headless|memory] [--compare TREE] [--tools 300]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.gitrepo import init_repo  # noqa: E402

PYTHON = sys.executable
BARE_APP = """
from textual.app import App
from textual.widgets import Input
class Bare(App):
    def compose(self):
        yield Input(placeholder="bare-ready")
Bare().run()
"""
SDK_FLOOR = """
import sys, anthropic
client = anthropic.Anthropic(api_key="bench", base_url=sys.argv[1], max_retries=0)
with client.messages.stream(model="m", max_tokens=10, messages=[{"role": "user", "content": "hi"}]) as stream:
    stream.get_final_message()
"""
SDK_FLOOR_NO_TEARDOWN = SDK_FLOOR + "import os; os._exit(0)\n"  # the same, without freeing the modules at exit
PROMPT_MARK = "Ask, /help, @file"  # the prompt box placeholder (ui/app.py PROMPT_HINT)


class Window:
    """One tmux server on its own socket running one command; the clock starts when the command is started."""

    def __init__(self, command: list[str], cwd: Path, env: dict[str, str]) -> None:
        self.socket = f"bench-startup-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        exports = " ".join(f"{key}={shlex.quote(value)}" for key, value in env.items())
        shell = f"cd {shlex.quote(str(cwd))} && env -u COLUMNS -u LINES {exports} {shlex.join(command)}; sleep 30"
        self.started = time.perf_counter()
        self.tmux("new-session", "-d", "-x", "160", "-y", "48", "-s", "bench", shell)

    def tmux(self, *args: str) -> str:
        environment = {key: value for key, value in os.environ.items() if key not in ("COLUMNS", "LINES", "TMUX")}
        return subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, env=environment,
                              timeout=10).stdout

    def wait_for(self, predicate: Callable[[str], bool], timeout: float = 60.0) -> float:
        """Seconds from the command's start until the screen satisfies `predicate` (polled every few ms)."""
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            if predicate(self.tmux("capture-pane", "-p", "-t", "bench")):
                return time.perf_counter() - self.started
            time.sleep(0.003)
        raise TimeoutError(f"the screen never got ready:\n{self.tmux('capture-pane', '-p', '-t', 'bench')}")

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, timeout=10)


def terminal_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {"TERM": "xterm-256color", "COLORTERM": "truecolor"}
    env.update(extra or {})
    return env


def no_model() -> dict[str, str]:
    return {"ANTHROPIC_API_KEY": "", "ANTHROPIC_BASE_URL": "", "ANTHROPIC_AUTH_TOKEN": ""}


def paint_once(command: list[str], cwd: Path, mark: str, env: dict[str, str]) -> float:
    window = Window(command, cwd, terminal_env(env))
    try:
        return window.wait_for(lambda screen: mark in screen)
    finally:
        window.close()


FROM_TREE = """
import runpy, sys
sys.meta_path = [f for f in sys.meta_path if "editable" not in getattr(type(f), "__module__", "") + getattr(f, "__module__", "")]
sys.path.insert(0, sys.argv.pop(1))
sys.argv[0] = "tuiagent"
runpy.run_module("tui_agent.cli", run_name="__main__")
"""
"""`python -m tui_agent.cli` from another source tree (the editable install's finder set aside)."""


def bench_paint(project: Path, runs: int, compare: Path | None = None) -> None:
    bare: list[float] = []
    results: dict[str, list[float]] = {"tuiagent": [], **({f"{compare}": []} if compare is not None else {})}
    for _ in range(runs):
        bare.append(paint_once([PYTHON, "-c", BARE_APP], project, "bare-ready", no_model()))
        results["tuiagent"].append(paint_once([PYTHON, "-m", "tui_agent.cli", "--project", str(project)], project, PROMPT_MARK, no_model()))
        if compare is not None:  # alternated with the others: the same machine load for all three
            results[f"{compare}"].append(paint_once([PYTHON, "-c", FROM_TREE, str(compare), "--project", str(project)], project,
                                                    PROMPT_MARK, no_model()))
    mb = statistics.median(bare)
    print(f"first paint in tmux, from process start (median of {runs}):")
    for name, ours in results.items():
        mo = statistics.median(ours)
        ratios = [o / b for o, b in zip(ours, bare, strict=True)]  # each run beside the bare app started just before it
        print(f"  {name}: prompt box shown  {mo * 1000:6.0f} ms   {mo / mb:4.2f}x a bare Textual app ({mb * 1000:.0f} ms); "
              f"median of the runs' ratios {statistics.median(ratios):.2f}x")


class Server:
    """tests/fake_messages_api.py as a subprocess answering every request at once; counts requests received."""

    def __init__(self, folder: Path) -> None:
        script = folder / "script.json"
        script.write_text(json.dumps([{"repeat": {"text": "hello"}}]))
        self.log = folder / "requests.jsonl"
        self.process = subprocess.Popen([PYTHON, str(ROOT / "tests" / "fake_messages_api.py"), "--script", str(script),
                                         "--log", str(self.log)], stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        self.base_url = self.process.stdout.readline().strip().removeprefix("listening on ")

    def requests(self) -> int:
        return len(self.log.read_text().splitlines()) if self.log.exists() else 0

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait()


def app_cpu_s(window: Window) -> float:
    """CPU seconds (user + system, every thread) the process the window's shell started has used so far."""
    shell = pane_pid(window)
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            fields = stat[stat.rfind(")") + 2:].split()
            if int(fields[1]) == shell:
                return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return float("nan")


def prompt_once(project: Path, server: Server, tree: Path | None = None) -> float:
    return prompt_once_with_cpu(project, server, tree)[0]


def prompt_once_with_cpu(project: Path, server: Server, tree: Path | None = None) -> tuple[float, float]:
    """Seconds from process start until the server receives the prompt, and the app's CPU seconds by then."""
    env = terminal_env({"ANTHROPIC_API_KEY": "bench", "ANTHROPIC_BASE_URL": server.base_url})
    before = server.requests()
    launch = [PYTHON, "-m", "tui_agent.cli"] if tree is None else [PYTHON, "-c", FROM_TREE, str(tree)]
    window = Window([*launch, "--project", str(project)], project, env)
    try:
        window.wait_for(lambda screen: PROMPT_MARK in screen)
        window.tmux("send-keys", "-t", "bench", "-l", "hi")
        window.tmux("send-keys", "-t", "bench", "Enter")
        deadline = time.perf_counter() + 60
        while server.requests() == before:
            if time.perf_counter() > deadline:
                raise TimeoutError("the prompt never reached the server")
            time.sleep(0.003)
        return time.perf_counter() - window.started, app_cpu_s(window)
    finally:
        window.close()


def bench_prompt(project: Path, runs: int, folder: Path) -> None:
    server = Server(folder)
    try:
        bare = [paint_once([PYTHON, "-c", BARE_APP], project, "bare-ready", no_model()) for _ in range(runs)]
        ours = [prompt_once(project, server) for _ in range(runs)]
    finally:
        server.stop()
    mb, mo = statistics.median(bare), statistics.median(ours)
    print(f"a prompt typed as soon as the prompt box shows, in tmux (median of {runs}):")
    print(f"  received by the server      {mo * 1000:6.0f} ms   {mo / mb:4.1f}x a bare Textual app's first paint ({mb * 1000:.0f} ms)")


def bench_prompt_tools(folder: Path, tools: int, runs: int, compare: Path | None) -> None:
    """A prompt typed at first paint in a project with `tools` committed tools: opened before (its state.db
    there) and a fresh clone each run; this tree and `compare`'s alternated."""
    from bench_catalog_load import make_project
    from bench_cold_open import fresh_clone

    origin = folder / "origin"
    make_project(origin, tools)
    warm = fresh_clone(origin, folder / "warm")
    server = Server(folder)
    trees: dict[str, Path | None] = {"tuiagent": None, **({str(compare): compare} if compare is not None else {})}
    results: dict[str, list[tuple[float, float]]] = {f"{name} {kind}": [] for name in trees
                                                     for kind in ("opened before", "fresh clone")}
    try:
        for tree in trees.values():
            prompt_once(warm, server, tree)  # the first open validates the tools and writes state.db
        for number in range(runs):
            for name, tree in trees.items():
                results[f"{name} opened before"].append(prompt_once_with_cpu(warm, server, tree))
                clone = fresh_clone(origin, folder / f"clone-{number}-{len(results[f'{name} fresh clone'])}-{abs(hash(name))}")
                results[f"{name} fresh clone"].append(prompt_once_with_cpu(clone, server, tree))
    finally:
        server.stop()
    print(f"a prompt typed as soon as the prompt box shows, {tools} tools, in tmux (median of {runs}, alternated; "
          f"load average {os.getloadavg()[0]:.1f}):")
    for name, runs_of in results.items():
        times = [wall for wall, _ in runs_of]
        cpu = statistics.median(cpu for _, cpu in runs_of)
        print(f"  {name}: received by the server  {statistics.median(times) * 1000:6.0f} ms "
              f"(min {min(times) * 1000:.0f}, max {max(times) * 1000:.0f}); the app's CPU by then {cpu * 1000:.0f} ms")


def timed(command: list[str], env: dict[str, str], cwd: Path) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise RuntimeError(f"{command[:3]} failed: {done.stderr[-2000:]}")
    return time.perf_counter() - started


def bench_headless(project: Path, runs: int, folder: Path) -> None:
    server = Server(folder)
    env = {**os.environ, "ANTHROPIC_API_KEY": "bench", "ANTHROPIC_BASE_URL": server.base_url}
    try:
        floor, bare, ours = [], [], []
        for _ in range(runs):
            floor.append(timed([PYTHON, "-c", SDK_FLOOR, server.base_url], env, project))
            bare.append(timed([PYTHON, "-c", SDK_FLOOR_NO_TEARDOWN, server.base_url], env, project))
            ours.append(timed([PYTHON, "-m", "tui_agent.cli", "--project", str(project), "-p", "hi"], env, project))
    finally:
        server.stop()
    mf, mb, mo = statistics.median(floor), statistics.median(bare), statistics.median(ours)
    print(f"headless `tuiagent -p hi` against a local server answering at once (median of {runs}):")
    print(f"  process start to exit       {mo * 1000:6.0f} ms   {mo / mf:4.1f}x `import anthropic` + one SDK request ({mf * 1000:.0f} ms)")
    print(f"                                          {mo / mb:4.1f}x the same without the interpreter's teardown at exit ({mb * 1000:.0f} ms)")


def tree_pss_mib(root: int) -> float:
    """PSS of `root` and all its descendants, in MiB."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            children.setdefault(int(stat[stat.rfind(")") + 2:].split()[1]), []).append(int(entry.name))
    total_kib, stack = 0, [root]
    while stack:
        pid = stack.pop()
        stack.extend(children.get(pid, []))
        try:
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total_kib += int(line.split()[1])
        except OSError:
            pass
    return total_kib / 1024


def pane_pid(window: Window) -> int:
    return int(window.tmux("display-message", "-p", "-t", "bench", "#{pane_pid}").strip())


def idle_memory(command: list[str], cwd: Path, mark: Callable[[str], bool], env: dict[str, str]) -> float:
    window = Window(command, cwd, terminal_env(env))
    try:
        window.wait_for(mark)
        time.sleep(5)
        return tree_pss_mib(pane_pid(window))
    finally:
        window.close()


def bench_memory(project: Path, folder: Path) -> None:
    server = Server(folder)
    try:
        env = {"ANTHROPIC_API_KEY": "bench", "ANTHROPIC_BASE_URL": server.base_url}
        ours = idle_memory([PYTHON, "-m", "tui_agent.cli", "--project", str(project)], project,
                           lambda screen: PROMPT_MARK in screen and "loading" not in screen, env)
        bare = idle_memory([PYTHON, "-c", BARE_APP], project, lambda screen: "bare-ready" in screen, no_model())
    finally:
        server.stop()
    print("idle process tree, PSS (the app, its sandbox's warm workers and every other process under it):")
    print(f"  tuiagent idle                {ours:6.0f} MiB  {ours / bare:4.1f}x a bare Textual app ({bare:.0f} MiB); target < 160 MiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--only", choices=("paint", "prompt", "headless", "memory"))
    parser.add_argument("--compare", type=Path, help="paint, prompt with --tools: also another tuiagent source tree "
                        "(the folder holding tui_agent/)")
    parser.add_argument("--tools", type=int, default=0, help="prompt: a project with this many committed tools, "
                        "opened before and freshly cloned")
    args = parser.parse_args()
    if shutil.which("tmux") is None:
        raise SystemExit("tmux is required")
    # as on a person's machine, where the first start (or pip) wrote the bytecode: PYTHONDONTWRITEBYTECODE=1 in this
    # environment would otherwise make every measured start compile tuiagent's modules (the bare app's are compiled)
    for tree in (ROOT, *([args.compare] if args.compare else [])):
        compileall.compile_dir(tree / "tui_agent", quiet=1)
    folder = Path(tempfile.mkdtemp(prefix="bench-startup-"))
    try:
        project = init_repo(folder / "project")
        if args.only in (None, "paint"):
            bench_paint(project, args.runs, args.compare)
        if args.only in (None, "prompt") and args.tools:
            bench_prompt_tools(folder, args.tools, args.runs, args.compare)
        elif args.only in (None, "prompt"):
            bench_prompt(project, args.runs, folder)
        if args.only in (None, "headless"):
            bench_headless(project, args.runs, folder)
        if args.only in (None, "memory"):
            bench_memory(project, folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from trusted_temp import trust_temporary_projects

    trust_temporary_projects()
    main()
