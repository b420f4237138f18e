"""Benchmark: does tool authoring pay? The same tasks with authoring on and off, side by side.

Method: a generated repository holds test-run logs of several services (`logs/<service>/run-<n>.log`, one
`PASS name` / `FAIL name` line per test). The tasks ask, service after service, which tests are flaky (passed in one
run, failed in another); the answer is checked against the logs. Each condition runs the tasks in order in one fresh
copy of the repository, one session, through the real runtime (sandbox, catalog, SDK): "on" is tuiagent as
shipped; "off" takes `create_tool` out of the tools and tells the model authoring is off. Reported per condition:
tasks solved, model requests, tool calls, tokens (input + cache writes + cache reads + output).

Against a real model: set ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL for another server), optionally --model.
`--scripted` plays a scripted model on the local fake Messages API instead (tests/fake_api): it reads the tool
results it is sent and answers from them, so it checks the harness end to end (the tests run it this way), while
its numbers only show what a model that authors once and then reuses would save.

Run: .venv/bin/python benchmarks/bench_authoring.py [--scripted] [--services 4] [--runs 5] [--model M] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tui_agent.core.agent.permissions import approve_all  # noqa: E402
from tui_agent.core.events import ToolCallStarted, TurnFinished  # noqa: E402
from tui_agent.core.runtime import open_runtime  # noqa: E402

TESTS = ["test_login", "test_logout", "test_refund", "test_pay", "test_search", "test_export", "test_upload", "test_sync"]
OFF_NOTE = "Tool authoring is switched off for this session: do not write tools; use the built-in tools only."
TASK = ("Which tests of the `{service}` service are flaky, i.e. passed in one run and failed in another? The run logs are "
        "in logs/{service}/. Answer with the sorted test names on one line, comma-separated, and nothing else.")


@dataclass
class Outcome:
    """One condition's totals over all tasks."""

    condition: str
    solved: int
    tasks: int
    requests: int
    tool_calls: int
    tokens: int


def generate(root: Path, services: int, runs: int, seed: int = 7) -> dict[str, list[str]]:
    """Write the logs and return each service's flaky tests (the expected answers)."""
    rng = random.Random(seed)
    expected: dict[str, list[str]] = {}
    for number in range(services):
        service = f"svc{number}"
        flaky = sorted(rng.sample(TESTS, 2 + number % 2))
        folder = root / "logs" / service
        folder.mkdir(parents=True)
        for run in range(runs):
            lines = []
            for test in TESTS:
                passed = (run % 2 == 0) if test in flaky else True
                lines.append(f"{'PASS' if passed else 'FAIL'} {test}")
            (folder / f"run-{run}.log").write_text("\n".join(lines) + "\n")
        expected[service] = flaky
    (root / "README.md").write_text("A service monorepo; test logs under logs/.\n")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "init"], cwd=root, check=True)
    return expected


def solved(answer: str, expected: list[str]) -> bool:
    return sorted(set(re.findall(r"test_\w+", answer))) == expected


async def run_condition(root: Path, expected: dict[str, list[str]], *, authoring: bool, model: str | None,
                        base_url: str | None = None, api_key: str | None = None) -> Outcome:
    runtime = await open_runtime(root, approve=approve_all, model=model, base_url=base_url, api_key=api_key,
                                 trust_project=True)  # the project this benchmark generated: trusted for the run
    try:
        agent = runtime.agent
        if agent is None:
            raise SystemExit(runtime.core.model_error)
        if not authoring:
            agent.builtins.pop("create_tool", None)
            agent.add_note(OFF_NOTE)
        before = agent.usage.requests
        solved_count = tool_calls = 0
        for service, answer in expected.items():
            final = ""
            async for event in agent.run_turn(TASK.format(service=service)):
                if isinstance(event, ToolCallStarted):
                    tool_calls += 1
                elif isinstance(event, TurnFinished):
                    final = event.text
            solved_count += solved(final, answer)
        usage = agent.usage
        tokens = usage.input_tokens + usage.output_tokens + usage.cache_read_tokens + usage.cache_write_tokens
        return Outcome("authoring on" if authoring else "authoring off", solved_count, len(expected),
                       usage.requests - before, tool_calls, tokens)
    finally:
        await runtime.aclose()


def print_table(outcomes: list[Outcome]) -> None:
    print(f"{'condition':15} {'solved':>7} {'requests':>9} {'tool calls':>11} {'tokens':>9}")
    for o in outcomes:
        print(f"{o.condition:15} {o.solved:>3}/{o.tasks:<3} {o.requests:>9} {o.tool_calls:>11} {o.tokens:>9}")


async def measure(options: argparse.Namespace) -> list[Outcome]:
    outcomes = []
    for authoring in (True, False):
        with tempfile.TemporaryDirectory() as temp:
            root = Path(temp) / "project"
            root.mkdir()
            expected = generate(root, options.services, options.runs)
            if options.scripted:
                outcomes.append(await run_scripted(root, expected, authoring=authoring))
            else:
                outcomes.append(await run_condition(root, expected, authoring=authoring, model=options.model))
    return outcomes


async def run_scripted(root: Path, expected: dict[str, list[str]], *, authoring: bool) -> Outcome:
    from benchmarks.authoring_script import ScriptedAnalyst
    from tests.fake_api import FakeMessagesAPI

    analyst = ScriptedAnalyst(authoring=authoring, runs=len(list((root / "logs" / next(iter(expected))).glob("*.log"))))
    with FakeMessagesAPI() as api:
        api.respond_with(analyst)
        return await run_condition(root, expected, authoring=authoring, model=None, base_url=api.base_url, api_key="scripted")


def main(argv: list[str] | None = None) -> list[Outcome]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scripted", action="store_true", help="a scripted model on the local fake API (no key needed)")
    parser.add_argument("--services", type=int, default=4)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--model")
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args(argv)
    if shutil.which("git") is None:
        raise SystemExit("git is needed")
    outcomes = asyncio.run(measure(options))
    if options.json:
        print(json.dumps([asdict(o) for o in outcomes]))
    else:
        print_table(outcomes)
    return outcomes


if __name__ == "__main__":
    main()
