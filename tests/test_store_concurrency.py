"""One writer at a time across processes: a prune from another process commits as a prune while this process watches,
and three catalogs starting at once make one catch-up commit (real processes, 50 rounds each)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

from tests.gitrepo import git
from tests.test_catalog_support import opened_catalog, started_sandbox, subjects, tool_source, wait_for

ROOT = Path(__file__).resolve().parent.parent
CHILD = Path(__file__).with_name("store_child.py")
ROUNDS = int(os.environ.get("TUIAGENT_STORE_ROUNDS", "50"))


class Child:
    """A tests/store_child.py process; `ask` sends one command and returns its JSON answer."""

    def __init__(self, repo: Path, *extra: str) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        self.proc = subprocess.Popen([sys.executable, str(CHILD), str(repo), *extra], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)

    def send(self, command: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()

    async def answer(self, timeout_s: float = 60.0) -> dict:
        assert self.proc.stdout is not None
        line = await asyncio.wait_for(asyncio.to_thread(self.proc.stdout.readline), timeout_s)
        if not line:
            assert self.proc.stderr is not None
            raise AssertionError(f"the child died: {self.proc.stderr.read()[-3000:]}")
        return json.loads(line)

    async def ask(self, command: str) -> dict:
        self.send(command)
        return await self.answer()

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


async def test_a_prune_from_another_process_commits_as_a_prune_while_a_watcher_runs(repo: Path) -> None:
    async with started_sandbox(repo, tier="rlimits") as sandbox, opened_catalog(repo, sandbox) as catalog:
        await catalog.save_tool("double", tool_source("double"))
        watch = asyncio.create_task(catalog.watch())
        child = Child(repo)
        try:
            await wait_for(lambda: catalog.watcher is not None and catalog.watcher.ready.is_set())
            assert (await child.answer())["ready"]
            for round_ in range(ROUNDS):
                before = len(subjects(repo))
                pruned = await child.ask("prune double")
                assert pruned["committed"], f"round {round_}: {pruned}"
                await wait_for(lambda: catalog.get("double") is None)
                restored = await child.ask("restore double")
                assert restored["commit"], f"round {round_}: {restored}"
                await wait_for(lambda: catalog.get("double") is not None and catalog.get("double").status != "broken")
                new = subjects(repo)[: len(subjects(repo)) - before]
                assert [s.split(" (from ")[0] for s in new] == ["tuiagent: restore tool double", "tuiagent: prune tool double"], \
                    f"round {round_}: {new}"
            assert catalog.git.pending() == {}
        finally:
            child.close()
            watch.cancel()
            await asyncio.gather(watch, return_exceptions=True)


async def test_the_watcher_waits_for_another_process_holding_the_writer_lock(repo: Path) -> None:
    """Deterministic: the other process pauses half a second between deleting the file and committing the prune."""
    async with started_sandbox(repo, tier="rlimits") as sandbox, opened_catalog(repo, sandbox) as catalog:
        await catalog.save_tool("double", tool_source("double"))
        watch = asyncio.create_task(catalog.watch())
        try:
            await wait_for(lambda: catalog.watcher is not None and catalog.watcher.ready.is_set())
            child = Child(repo, "slow-prune", "double", "0.5")
            assert (await child.answer())["deleted"]
            assert (await child.answer())["committed"]
            child.close()
            await wait_for(lambda: catalog.get("double") is None)
            await asyncio.sleep(0.3)
            assert subjects(repo)[:2] == ["tuiagent: prune tool double", "tuiagent: add tool double"]
            assert catalog.git.pending() == {}
        finally:
            watch.cancel()
            await asyncio.gather(watch, return_exceptions=True)


async def test_three_catalogs_starting_at_once_make_one_catch_up_commit(repo: Path) -> None:
    names = ("alpha", "beta")
    variants = [{name: tool_source(name, f"return x + {k}") for name in names} for k in (1, 2)]
    children = [Child(repo) for _ in range(3)]
    try:
        for child in children:
            assert (await child.answer())["ready"]
        for round_ in range(ROUNDS):
            for name, source in variants[round_ % 2].items():
                (repo / ".agent" / "tools" / f"{name}.py").write_text(source)
            before = len(subjects(repo))
            for child in children:
                child.send("open")
            reports = [await child.answer(120) for child in children]
            new = subjects(repo)[: len(subjects(repo)) - before]
            assert new == ["tuiagent: catch up tools alpha, beta (changed while tuiagent was not running)"], \
                f"round {round_}: {new} {reports}"
            assert sorted(tuple(report["caught_up"]) for report in reports) == [(), (), names], f"round {round_}: {reports}"
            assert git(repo, "status", "--porcelain", "--", ".agent/tools") == ""
    finally:
        for child in children:
            child.close()
