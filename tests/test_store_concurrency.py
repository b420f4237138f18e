"""One writer at a time across processes: a prune from another process commits as a prune while this process watches,
and three catalogs starting at once make one catch-up commit (real processes, 8 rounds each: without the writer lock both
fail at round 0, so the rounds are repeats for a rare interleaving; TUIAGENT_STORE_ROUNDS=50 for a stress run)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from tests.gitrepo import git
from tests.catalog_support import opened_catalog, started_sandbox, subjects, tool_source, wait_for
from tui_agent.core.project import Project
from tui_agent.core.recipes.book import RecipeBook
from tui_agent.core.recipes.versioned_recipes import RecipeStore
from tui_agent.core.versioning.gitstore import CatalogGit

ROOT = Path(__file__).resolve().parent.parent
CHILD = Path(__file__).with_name("store_child.py")
ROUNDS = int(os.environ.get("TUIAGENT_STORE_ROUNDS", "8"))


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


HOOK_RUNNING = "hook-running"


def slow_recipe_hook(repo: Path, seconds: float) -> None:
    """A pre-commit hook that lints recipe files and takes a moment doing it (commits of tools stay quick); while it
    runs, `.git/hook-running` exists, so the test knows git's commit lock is taken."""
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.parent.mkdir(parents=True, exist_ok=True)
    hook.write_text("#!/bin/sh\n"
                    'case "$(git diff --cached --name-only)" in\n'
                    f'  *.agent/recipes/*) touch "$(git rev-parse --git-dir)/{HOOK_RUNNING}"; sleep {seconds};'
                    f' rm -f "$(git rev-parse --git-dir)/{HOOK_RUNNING}";;\n'
                    "esac\n")
    hook.chmod(0o755)


class RecipeWriter:
    """The open TUI's own writes (its agent or a recipe saving a recipe), through the real recipe store."""

    def __init__(self, repo: Path) -> None:
        project = Project.at(repo)
        self.store = RecipeStore(project, CatalogGit(repo), RecipeBook(project, tool_status=lambda _name: None))
        self.saves = 0

    async def save(self) -> None:
        self.saves += 1
        source = f'description = "busy {self.saves}"\n[trigger]\non = "command"\n[action]\nprompt = "say {self.saves}"\n'
        await self.store.save("busy", source)


async def prune_while_the_tui_commits(child: Child, writer: RecipeWriter, repo: Path, *, paused_s: float = 0.15) -> dict:
    """The child prunes `double` while the TUI commits a recipe (its hook running, git's commit lock taken), and the
    moment the file is gone the child is stopped for `paused_s` (SIGSTOP/SIGCONT), as a loaded machine may deschedule
    it between deleting the file and committing the deletion; the TUI's watcher meanwhile runs on."""
    tool = repo / ".agent" / "tools" / "double.py"
    assert (await child.ask("prune-on-go double"))["opened"]
    saving = asyncio.create_task(writer.save())
    await wait_for(lambda: (repo / ".git" / HOOK_RUNNING).exists())
    child.send("go")
    deadline = asyncio.get_running_loop().time() + 30
    while tool.exists() and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.001)
    os.kill(child.proc.pid, signal.SIGSTOP)
    try:
        await asyncio.sleep(paused_s)
    finally:
        os.kill(child.proc.pid, signal.SIGCONT)
    pruned = await child.answer()
    await saving
    return pruned


async def test_a_prune_from_another_process_commits_as_a_prune_while_a_watcher_runs(repo: Path) -> None:
    """Without the writer lock the TUI's watcher would see the file gone with HEAD still holding it, commit the deletion
    as its own ("file deleted outside tuiagent"), and leave the prune nothing to commit; with it, the watcher waits
    for the prune to finish (and a prune never starts while the TUI's own commit is under way)."""
    async with started_sandbox(repo, tier="rlimits") as sandbox, opened_catalog(repo, sandbox) as catalog:
        await catalog.save("double", tool_source("double"))
        slow_recipe_hook(repo, 0.1)
        watch = asyncio.create_task(catalog.watch())
        writer = RecipeWriter(repo)
        child = Child(repo)
        try:
            await wait_for(lambda: catalog.watcher is not None and catalog.watcher.ready.is_set())
            assert (await child.answer())["ready"]
            for round_ in range(ROUNDS):
                before = len(subjects(repo))
                pruned = await prune_while_the_tui_commits(child, writer, repo)
                assert pruned["committed"], f"round {round_}: {pruned}"
                await wait_for(lambda: catalog.get("double") is None)
                restored = await child.ask("restore double")
                assert restored["commit"], f"round {round_}: {restored}"
                await wait_for(lambda: catalog.get("double") is not None and catalog.get("double").status != "broken")
                log = subjects(repo)
                new = log[: len(log) - before]
                ours = [s.split(" (from ")[0] for s in new if "recipe busy" not in s]
                assert ours == ["tuiagent: restore tool double", "tuiagent: prune tool double"], f"round {round_}: {new}"
                assert [s for s in new if "recipe busy" in s] in (["tuiagent: add recipe busy"], ["tuiagent: update recipe busy"])
            assert catalog.git.pending() == {}
        finally:
            child.close()
            watch.cancel()
            await asyncio.gather(watch, return_exceptions=True)


async def test_the_watcher_waits_for_another_process_holding_the_writer_lock(repo: Path) -> None:
    """Deterministic: the other process pauses half a second between deleting the file and committing the prune."""
    async with started_sandbox(repo, tier="rlimits") as sandbox, opened_catalog(repo, sandbox) as catalog:
        await catalog.save("double", tool_source("double"))
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
