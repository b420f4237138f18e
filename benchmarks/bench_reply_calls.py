"""Back-to-back catalog calls in one reply, as a person waits, against `read_file` calls measured in the same run.

A turn through `Agent.run_turn` (the undo recorder, the session log, the catalog's usage counts, the audit log:
everything a real turn does) against the local fake Messages API server: the first reply asks for N tool calls, the
second answers in text. What is timed is what a person waits after the reply arrived: from the first call's
`ToolCallStarted` to the moment the server receives the request carrying the results. Turns alternate between N calls
of a read-only catalog tool (`ping`, no WRITES: its project is read-only in the sandbox) and N `read_file` calls (the
baseline: a built-in run in the host process), so both see the same machine load; each figure is printed beside that
baseline as a difference per call and a ratio.

    .venv/bin/python benchmarks/bench_reply_calls.py [--rounds 15] [--calls 20]

Figures: N back to back (target: at most 8 ms per call over `read_file`); one call alone (a single sandboxed call's
added latency, target at most 30 ms); and N back to back with undo's recorder off (undo's bookkeeping on read-only
calls, target: no difference), also to the turn's end (`TurnFinished`, after undo's last checkpoint of the turn).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.fake_messages_api import FakeMessagesAPI, reply, text, tool_use  # noqa: E402
from tui_agent.core.agent.permissions import approve_all  # noqa: E402
from tui_agent.core.events import ToolCallFinished, ToolCallStarted, TurnFinished  # noqa: E402
from tui_agent.core.runtime import Runtime, open_runtime  # noqa: E402
from tui_agent.core.sandbox import SandboxPolicy, ToolBatch, ToolCall  # noqa: E402

TOOL = 'def ping(x: int) -> int:\n    """Echo x.\n\n    Args:\n        x: a number\n    """\n    return x\n\n\ndef test_ping():\n    assert ping(2) == 2\n'


def make_repo(folder: Path) -> Path:
    for args in (["init", "-q", "-b", "main"], ["config", "user.email", "b@example.com"], ["config", "user.name", "Bench"]):
        subprocess.run(["git", *args], cwd=folder, check=True)
    (folder / "README.md").write_text("bench\n")
    subprocess.run(["git", "add", "README.md"], cwd=folder, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "init"], cwd=folder, check=True)
    return folder


class Arrivals:
    """The moment each request reaches the fake server (its callback runs as the request arrives)."""

    def __init__(self, api: FakeMessagesAPI) -> None:
        self.times: list[float] = []
        self.queue: list[object] = []
        api.respond_with(self._answer)

    def _answer(self, _request: object) -> object:
        self.times.append(time.perf_counter())
        return self.queue.pop(0)


async def one_turn(runtime: Runtime, arrivals: Arrivals,
                   calls: list[tuple[str, dict[str, object]]]) -> tuple[float, float, float]:
    """Ms from the first ToolCallStarted to the arrival of the request with the results, and to the turn's end
    (TurnFinished: after undo's last checkpoint, when the person sees the turn is over); ms of the event loop
    thread's CPU for the whole turn (what the host spends, less the SDK's and git's other threads and processes)."""
    assert runtime.agent is not None
    runtime.new_session()
    arrivals.queue[:] = [reply(*[tool_use(name, args) for name, args in calls]), reply(text("done"))]
    first: float | None = None
    ended: float | None = None
    finished = 0
    cpu = time.thread_time()
    async for event in runtime.agent.run_turn("go"):
        if isinstance(event, ToolCallStarted) and first is None:
            first = time.perf_counter()
        elif isinstance(event, ToolCallFinished):
            finished += 1
            assert not event.is_error, event.result
        elif isinstance(event, TurnFinished):
            ended = time.perf_counter()
    assert first is not None and ended is not None and finished == len(calls)
    return (arrivals.times[-1] - first) * 1000, (ended - first) * 1000, (time.thread_time() - cpu) * 1000


RUN_ALONE = "sandboxed run alone, per call"
TO_END = ", to the turn's end"
HOST_CPU = ", host CPU"
BATCH_ALONE = "batched sandboxed run alone, per call"


async def runs_alone(runtime: Runtime, count: int) -> float:
    """Ms per call of `count` back-to-back `Sandbox.run(ToolCall)` runs of the same tool, no agent around them:
    what the sandbox itself costs, so the rest of a catalog call's figure is the bookkeeping around it."""
    assert runtime.core.sandbox is not None and runtime.workshop.catalog is not None
    entry = runtime.workshop.catalog.registry.get("ping")
    assert entry is not None and entry.runnable is not None
    started = time.perf_counter()
    for _ in range(count):
        result = await runtime.core.sandbox.run(ToolCall("ping", "ping", {"x": 1}, str(entry.runnable)),
                                                SandboxPolicy(project_writable=False))
        assert result.ok, result
    return (time.perf_counter() - started) * 1000 / count


async def batch_alone(runtime: Runtime, count: int) -> float:
    """Ms per call of one `Sandbox.run(ToolBatch)` run of `count` calls (what a reply's batch costs in the sandbox)."""
    assert runtime.core.sandbox is not None and runtime.workshop.catalog is not None
    entry = runtime.workshop.catalog.registry.get("ping")
    assert entry is not None and entry.runnable is not None
    calls = ToolBatch((ToolCall("ping", "ping", {"x": 1}, str(entry.runnable)),) * count)
    started = time.perf_counter()
    results = await runtime.core.sandbox.run(calls, SandboxPolicy(project_writable=False))
    assert all(result.ok for result in results), results
    return (time.perf_counter() - started) * 1000 / count


async def measure(repo: Path, api: FakeMessagesAPI, rounds: int, count: int) -> dict[str, list[float]]:
    """Samples (ms) of each kind of turn, to the request with the results, (`TO_END`) to the turn's end and
    (`HOST_CPU`) of the event loop thread's CPU."""
    runtime = await open_runtime(repo, approve=approve_all, base_url=api.base_url, api_key="bench",
                                 trust_project=True)
    assert runtime.agent is not None and runtime.workshop.catalog is not None
    arrivals = Arrivals(api)
    record = await runtime.workshop.catalog.save("ping", TOOL, author="bench")
    assert record.record.spec is not None and not record.record.spec.writes, record
    ping = ("ping", {"x": 1})
    read = ("read_file", {"path": "README.md"})
    recorder = runtime.agent.recorder
    without_undo: Callable[[], None] = lambda: setattr(runtime.agent, "recorder", None)  # noqa: E731
    with_undo: Callable[[], None] = lambda: setattr(runtime.agent, "recorder", recorder)  # noqa: E731
    kinds: dict[str, tuple[list[tuple[str, dict[str, object]]], Callable[[], None]]] = {
        f"read_file x{count}": ([read] * count, with_undo),
        f"catalog x{count}": ([ping] * count, with_undo),
        f"catalog x{count}, undo off": ([ping] * count, without_undo),
        f"read_file x{count}, undo off": ([read] * count, without_undo),
        "read_file x1": ([read], with_undo),
        "catalog x1": ([ping], with_undo),
    }
    samples: dict[str, list[float]] = {name: [] for name in kinds}
    ends: dict[str, list[float]] = {name: [] for name in kinds}
    cpus: dict[str, list[float]] = {name: [] for name in kinds}
    samples[RUN_ALONE] = []
    samples[BATCH_ALONE] = []
    try:
        for calls, setup in kinds.values():  # warm-up: read-only workers kept warm, caches filled
            setup()
            await one_turn(runtime, arrivals, calls)
        await asyncio.sleep(1.0)
        for _ in range(rounds):
            for name, (calls, setup) in kinds.items():
                setup()
                await asyncio.sleep(0.3)  # a new reply: the warm pool refilled, as between two model requests
                to_request, to_end, cpu = await one_turn(runtime, arrivals, calls)
                samples[name].append(to_request)
                ends[name].append(to_end)
                cpus[name].append(cpu)
            await asyncio.sleep(0.3)
            samples[RUN_ALONE].append(await runs_alone(runtime, count))
            await asyncio.sleep(0.3)
            samples[BATCH_ALONE].append(await batch_alone(runtime, count))
    finally:
        with_undo()
        await runtime.aclose()
    samples.update({f"{name}{TO_END}": values for name, values in ends.items()})
    samples.update({f"{name}{HOST_CPU}": values for name, values in cpus.items()})
    return samples


def report(samples: dict[str, list[float]], count: int) -> None:
    alone = statistics.median(samples.pop(RUN_ALONE))
    batched = statistics.median(samples.pop(BATCH_ALONE))
    med = {name: statistics.median(values) for name, values in samples.items()
           if not name.endswith((TO_END, HOST_CPU))}
    end = {name[:-len(TO_END)]: statistics.median(values) for name, values in samples.items() if name.endswith(TO_END)}
    cpu = {name[:-len(HOST_CPU)]: statistics.median(v) for name, v in samples.items() if name.endswith(HOST_CPU)}

    def over(name: str, base: str, calls: int) -> tuple[float, float]:
        return (med[name] - med[base]) / calls, med[name] / med[base]

    rounds = len(samples[f"catalog x{count}"])
    print(f"medians of {rounds} alternated turns, ms from the first ToolCallStarted to the request with the results:")
    for name, value in med.items():
        print(f"  {name:28s} {value:8.2f} ms  ({value / name_calls(name):.2f} ms per call)")
    per_call, ratio = over(f"catalog x{count}", f"read_file x{count}", count)
    print(f"{count} back to back: {per_call:+.2f} ms per call over read_file (x{ratio:.2f}); "
          f"target <= 8 ms: {'met' if per_call <= 8 else 'NOT met'}")
    print(f"  of which the sandboxed run itself (Sandbox.run(ToolCall), {count} back to back, no agent): {alone:.2f} ms; "
          f"the rest, bookkeeping around the run beyond what a read_file call pays: {per_call - alone:+.2f} ms per call")
    print(f"  the same {count} calls as one batched run (Sandbox.run(ToolBatch), what a reply's back-to-back read-only "
          f"calls use): {batched:.2f} ms per call; the rest over read_file: {per_call - batched:+.2f} ms per call")
    host = (cpu[f"catalog x{count}"] - cpu[f"read_file x{count}"]) / count
    print(f"  the host's event loop thread, CPU per call over read_file: {host:+.2f} ms (a turn of {count}: "
          f"{cpu[f'catalog x{count}']:.1f} vs {cpu[f'read_file x{count}']:.1f} ms)")
    single, ratio = over("catalog x1", "read_file x1", 1)
    print(f"one call alone: {single:+.2f} ms over read_file (x{ratio:.2f}); target <= 30 ms: {'met' if single <= 30 else 'NOT met'}")
    undo = ((med[f"catalog x{count}"] - med[f"read_file x{count}"])
            - (med[f"catalog x{count}, undo off"] - med[f"read_file x{count}, undo off"])) / count
    print(f"undo's bookkeeping on a read-only catalog call: {undo:+.2f} ms per call (catalog minus read_file, "
          f"recorder on minus off); target: ~0 (within noise)")
    for kind in (f"catalog x{count}", f"read_file x{count}"):
        print(f"  to the turn's end (undo's last checkpoint included), {kind}: recorder on minus off "
              f"{end[kind] - end[kind + ', undo off']:+.2f} ms per turn ({end[kind]:.2f} vs {end[kind + ', undo off']:.2f} ms)")


def name_calls(name: str) -> int:
    return int(name.split(" x")[1].split(",")[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--calls", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder, FakeMessagesAPI() as api:
        samples = asyncio.run(measure(make_repo(Path(folder)), api, args.rounds, args.calls))
    report(samples, args.calls)


if __name__ == "__main__":
    main()
