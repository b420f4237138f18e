"""Benchmark of the catalog's git layer: commit latency against plain `git add` + `git commit`, and SIGKILL fault trials.

Run: .venv/bin/python benchmarks/bench_faults.py [--commits 30] [--trials 100]
Prints the median CatalogGit.commit time next to the baseline measured in the same run (`git add <file> &&
git commit -m ... -- <file>` in the same kind of repository), then runs the fault-injection trials of
tests/test_faults.py (kill at random points of create/update/revert/prune/restore) and prints what they saw.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.gitrepo import git, init_repo, make_user_changes, user_state  # noqa: E402
from tests.test_faults import Child, allowed_contents, check_ready, parse_events, wait_group_gone  # noqa: E402
from tests.faults_child import NAME, VERSIONS, digest  # noqa: E402
from tui_agent.core.versioning.gitstore import CatalogGit  # noqa: E402


def content(k: int) -> bytes:
    return f"def bench_tool() -> int:\n    \"\"\"Version {k}.\"\"\"\n    return {k}\n".encode()


def time_commits(folder: Path, count: int) -> tuple[float, float]:
    """Median seconds per commit: CatalogGit.commit, and plain git add + commit (the baseline)."""
    ours_repo = init_repo(folder / "ours")
    base_repo = init_repo(folder / "baseline")
    for repo in (ours_repo, base_repo):
        make_user_changes(repo)
        (repo / ".agent" / "tools").mkdir(parents=True)
    store = CatalogGit(ours_repo)
    path = ".agent/tools/bench_tool.py"
    ours, baseline = [], []
    for k in range(count):
        data = content(k)
        (ours_repo / path).write_bytes(data)
        start = time.perf_counter()
        outcome = store.commit({path: data}, f"tuiagent: update tool bench_tool ({k})")
        ours.append(time.perf_counter() - start)
        assert outcome.committed, outcome.message
        (base_repo / path).write_bytes(data)
        start = time.perf_counter()
        git(base_repo, "add", path)
        git(base_repo, "commit", "-q", "-m", f"update bench_tool ({k})", "--", path)
        baseline.append(time.perf_counter() - start)
    return statistics.median(ours), statistics.median(baseline)


def fault_trials(folder: Path, trials: int, seed: int) -> Counter[str]:
    repo = init_repo(folder / "faults")
    make_user_changes(repo)
    before = user_state(repo)
    rng = random.Random(seed)
    tool = repo / ".agent" / "tools" / f"{NAME}.py"
    known = {digest(v) for v in VERSIONS} | {None}
    disk: str | None = None
    stats: Counter[str] = Counter()
    for trial in range(trials + 1):
        child = Child(repo, rng.randrange(1 << 30), folder / "child-stderr.txt")
        stats.update(check_ready(child.read_line(60), disk))
        if trial == trials:
            child.proc.kill()
            child.drain()
            break
        time.sleep(rng.uniform(0.0, 0.3))
        if rng.random() < 0.5:
            os.killpg(child.proc.pid, signal.SIGKILL)
        else:
            child.proc.kill()
        events = parse_events(child.drain())
        wait_group_gone(child.proc.pid)
        actual = digest(tool.read_bytes()) if tool.exists() else None
        stats["complete versions"] += actual in known and actual in allowed_contents(events, disk)
        stats["fsck clean"] += git(repo, "fsck", "--no-dangling", "--no-progress").strip() == ""
        stats["user work intact"] += user_state(repo) == before
        stats["kills mid-step"] += bool(events) and "op" in events[-1]
        stats["steps started"] += sum(1 for event in events if "op" in event)
        disk = actual
    return stats


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--commits", type=int, default=30)
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--seed", type=int, default=random.randrange(1 << 30))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temp:
        ours, baseline = time_commits(Path(temp), args.commits)
        print(f"CatalogGit.commit (temporary index, hooks checked, CAS update-ref, index sync): {ours * 1000:.1f} ms median")
        print(f"baseline git add + git commit -- path:                                    {baseline * 1000:.1f} ms median")
        print(f"ratio: {ours / baseline:.2f}x the baseline")
        start = time.perf_counter()
        stats = fault_trials(Path(temp), args.trials, args.seed)
        elapsed = time.perf_counter() - start
        print(f"fault injection, seed {args.seed}: {args.trials} SIGKILLs in {elapsed:.0f} s "
              f"({elapsed / args.trials:.2f} s per trial)")
        for key, value in sorted(stats.items()):
            print(f"  {key}: {value}")


if __name__ == "__main__":
    main()
