"""Hand edits commit once they settle: one commit for a burst of saves, under the person's name, nothing lost."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from tests.cli_in_process import run_in_process
from tests.catalog_support import opened_catalog, started_sandbox, subjects, tool_source, wait_for
from tests.gitrepo import git
from tests.open_runtime_process import cli_env, open_tuiagent, run_cli
from tests.team_repos import with_double
from tui_agent.core.catalog.watching import WatchRecord, live_watchers
from tui_agent.core.versioning.writelock import WriterLock


async def test_a_burst_of_editor_saves_makes_one_commit_under_the_persons_name(repo: Path) -> None:
    async with started_sandbox(repo) as box, opened_catalog(repo, box) as catalog:
        await catalog.save("double", tool_source("double"))
        commits = len(subjects(repo))
        watch = asyncio.create_task(catalog.watch())
        try:
            await wait_for(lambda: catalog.watcher is not None and catalog.watcher.ready.is_set())
            path = catalog.project.tool_path("double")
            for n in range(1, 9):  # an editor saving every 150 ms
                path.write_text(tool_source("double", f"return 2 * x + {n}"))
                await asyncio.sleep(0.15)
            await wait_for(lambda: catalog.get("double").spec.source_sha
                           == catalog.registry.get("double").disk_sha, timeout=10)
            await wait_for(lambda: len(subjects(repo)) > commits, timeout=15)
            settled = time.monotonic()
            await asyncio.sleep(catalog.settle.settle_s + 1.0)
            assert len(subjects(repo)) == commits + 1, subjects(repo)[:4]  # one commit for the whole burst
            assert time.monotonic() - settled >= catalog.settle.settle_s
            assert subjects(repo)[0] == "tuiagent: update tool double (edited outside tuiagent)"
            assert git(repo, "log", "-1", "--format=%an <%ae>").strip() == "Dev <dev@example.com>"
            assert "return 2 * x + 8" in git(repo, "show", "HEAD:.agent/tools/double.py")
            assert catalog.get("double").commit == git(repo, "rev-parse", "HEAD").strip()
        finally:
            watch.cancel()
            await asyncio.gather(watch, return_exceptions=True)


async def test_a_settling_edit_is_not_lost_when_the_process_never_commits_it(repo: Path) -> None:
    async with started_sandbox(repo) as box:
        async with opened_catalog(repo, box) as first:
            await first.save("double", tool_source("double"))
            first.project.tool_path("double").write_text(tool_source("double", "return x + x"))
            assert await first.outside_edit({"double"}) == ["double"]
            assert first.settle.waiting() == ["double"]
            head = git(repo, "rev-parse", "HEAD")
            # the process dies here (no timer fires, no close): another one starts on the project
            first.settle.forget("double")
            async with opened_catalog(repo, box) as second:
                assert git(repo, "rev-parse", "HEAD") != head
                assert "return x + x" in git(repo, "show", "HEAD:.agent/tools/double.py")
                assert second.get("double").status == "unused"


async def test_a_revert_first_commits_the_settling_hand_edit(repo: Path) -> None:
    async with started_sandbox(repo) as box, opened_catalog(repo, box) as catalog:
        await catalog.save("double", tool_source("double"))
        catalog.project.tool_path("double").write_text(tool_source("double", "return x + x"))
        await catalog.outside_edit({"double"})
        await catalog.revert("double")
        assert subjects(repo)[:2] == ["tuiagent: revert tool double to " + subjects(repo)[0].rsplit(" ", 1)[1],
                                      "tuiagent: update tool double (edited outside tuiagent)"]
        assert "return 2 * x" in catalog.project.tool_path("double").read_text()


async def test_a_settling_commit_reads_the_file_again_once_it_holds_the_writer_lock(repo: Path) -> None:
    """The settle timer fires while another process (a CLI revert) holds the writer lock: what it commits is the file
    as that process left it. It used to read the file before waiting for the lock and then commit that stale hand
    edit over the revert, leaving HEAD different from the disk (met in a full run of the CLI revert test below)."""
    async with started_sandbox(repo) as box, opened_catalog(repo, box) as catalog:
        await catalog.save("double", tool_source("double"))
        path = catalog.project.tool_path("double")
        path.write_text(tool_source("double", "return x + x"))
        assert await catalog.outside_edit({"double"}) == ["double"]
        with WriterLock(repo).held():  # the other process, from before the timer fires to its revert's commit
            settling = asyncio.create_task(catalog.settle.flush("double"))
            await wait_for(catalog.pipeline.lock.locked)  # the settle commit has begun and waits for the writer lock
            git(repo, "commit", "-q", "-m", "tuiagent: update tool double (edited outside tuiagent)", "--", str(path))
            path.write_text(tool_source("double"))
            git(repo, "commit", "-q", "-m", "tuiagent: revert tool double", "--", str(path))
        await settling
        assert subjects(repo)[:2] == ["tuiagent: revert tool double", "tuiagent: update tool double (edited outside tuiagent)"]
        assert git(repo, "show", "HEAD:.agent/tools/double.py") == path.read_text() == tool_source("double")


def test_a_cli_command_during_a_settling_hand_edit_leaves_it_to_the_open_tuiagent(repo: Path) -> None:
    """The CLI's start-up catch-up used to commit the open TUI's settling edit as "changed while tuiagent was not
    running" (a lie, and a burst cut in two); it now leaves it to the process that watches it."""
    tools_dir = with_double(repo, "a tool").parent
    # a settle window the CLI surely runs inside; Ctrl-C then closes the open runtime, which commits what still settles
    with open_tuiagent(repo, settle_s=600, stop=signal.SIGINT) as holder:
        head = git(repo, "rev-parse", "HEAD")
        edited = tool_source("double", "return x + x")
        (tools_dir / "double.py").write_text(edited)
        wait_until(lambda: len(watch_records(repo, holder.pid)) == 2, "the open runtime never took the edit")
        done = run_in_process("--project", str(repo), "tools", "list", "--json")  # another process than the holder's
        assert done.returncode == 0, done.stderr
        assert git(repo, "rev-parse", "HEAD") == head, subjects(repo)[:3]  # the CLI committed nothing
        assert (tools_dir / "double.py").read_text() == edited
        assert len(watch_records(repo, holder.pid)) == 2, "the edit no longer settles in the open runtime"
        assert holder.poll() is None, "the open runtime died"
    assert holder.returncode is not None and list((repo / ".agent" / "cache" / "watchers").glob("*.lock")) == []
    new = git(repo, "log", "--format=%s|%an <%ae>", f"{head.strip()}..HEAD").splitlines()
    assert new == ["tuiagent: update tool double (edited outside tuiagent)|Dev <dev@example.com>"]  # one honest commit
    assert git(repo, "show", "HEAD:.agent/tools/double.py") == edited  # nothing lost
    assert not any("not running" in subject for subject in subjects(repo))
    assert git(repo, "status", "--porcelain", "--", ".agent").strip() == ""


def wait_until(predicate: Callable[[], bool], failure: str, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, failure
        time.sleep(0.05)


def watch_records(repo: Path, pid: int) -> list[Path]:
    """The watch records process `pid` holds: its watcher's, and one while a hand edit settles or commits."""
    return sorted((repo / ".agent" / "cache" / "watchers").glob(f"{pid}-*.lock"))


def test_a_watch_record_counts_while_its_process_lives_and_not_after_a_kill(repo: Path) -> None:
    cache = repo / ".agent" / "cache"
    script = ("import sys, time; from pathlib import Path; from tui_agent.core.catalog.watching import WatchRecord; "
              "record = WatchRecord.take(Path(sys.argv[1])); print('held', flush=True); time.sleep(600)")
    holder = subprocess.Popen([sys.executable, "-c", script, str(cache)], env=cli_env(), stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        assert live_watchers(cache) == [holder.pid]
        mine = WatchRecord.take(cache)
        assert mine is not None and live_watchers(cache) == [holder.pid]  # this process's own record is not counted
        mine.release()
    finally:
        holder.kill()  # no release: the kernel drops its lock
        holder.wait(timeout=30)
    assert live_watchers(cache) == []
    assert list((cache / "watchers").iterdir()) == []  # the dead process's record is removed


async def test_a_process_settling_an_edit_without_a_watcher_is_left_its_commit(repo: Path) -> None:
    """A settle timer alone (no watcher: the MCP server's or the agent's own re-check) also keeps a CLI from
    committing the edit as changed while tuiagent was not running."""
    async with started_sandbox(repo) as box, opened_catalog(repo, box) as catalog:
        await catalog.save("double", tool_source("double"))
        catalog.settle.settle_s = 60.0
        catalog.project.tool_path("double").write_text(tool_source("double", "return x + x"))
        assert await catalog.outside_edit({"double"}) == ["double"]
        head = git(repo, "rev-parse", "HEAD")
        done = await asyncio.to_thread(run_cli, repo, "tools", "list")
        assert done.returncode == 0, done.stderr
        assert git(repo, "rev-parse", "HEAD") == head
        await catalog.settle.flush()
        assert live_watchers(repo / ".agent" / "cache") == [] and not list((repo / ".agent/cache/watchers").iterdir())
    assert subjects(repo)[0] == "tuiagent: update tool double (edited outside tuiagent)"
    assert "return x + x" in git(repo, "show", "HEAD:.agent/tools/double.py")


def test_a_settling_edit_survives_a_kill_of_the_open_tuiagent(repo: Path) -> None:
    """kill -9 of the process that was settling a hand edit: its watch records go with it (the kernel drops the
    locks), so the next command commits the edit; nothing is lost."""
    tools_dir = with_double(repo, "a tool").parent
    records = repo / ".agent" / "cache" / "watchers"
    with open_tuiagent(repo, settle_s=600, stop=signal.SIGKILL) as holder:
        edited = tool_source("double", "return x + x")
        (tools_dir / "double.py").write_text(edited)
        # the watcher's record, then the settling commit's
        wait_until(lambda: len(watch_records(repo, holder.pid)) == 2, "the open runtime never took the edit")
    head = git(repo, "rev-parse", "HEAD")
    done = run_in_process("--project", str(repo), "tools", "list")
    assert done.returncode == 0, done.stderr
    assert git(repo, "rev-parse", "HEAD~1") == head
    assert git(repo, "show", "HEAD:.agent/tools/double.py") == edited
    assert list(records.glob("*.lock")) == []  # the dead process's records were cleared


def test_a_cli_revert_during_a_settling_hand_edit_commits_the_edit_first(repo: Path) -> None:
    """As in one process (a revert commits the settling edit first), across processes: the CLI commits the open
    tuiagent's settling edit under the person's name, then reverts; the open one then commits nothing more."""
    tools_dir = with_double(repo, "a tool").parent
    # a settle window the CLI surely runs inside; Ctrl-C then closes the open runtime, which commits what still settles
    with open_tuiagent(repo, settle_s=600, stop=signal.SIGINT) as holder:
        head = git(repo, "rev-parse", "HEAD").strip()
        edited = tool_source("double", "return x + x")
        (tools_dir / "double.py").write_text(edited)
        wait_until(lambda: len(watch_records(repo, holder.pid)) == 2, "the open runtime never took the edit")
        done = run_in_process("--project", str(repo), "tools", "revert", "double")
        assert done.returncode == 0, done.stdout + done.stderr
        assert holder.poll() is None, "the open runtime died"
    assert holder.returncode is not None  # closed: had its edit still settled, it would have committed it now
    new = git(repo, "log", "--format=%s|%an", f"{head}..HEAD").splitlines()
    assert len(new) == 2 and new[0].startswith("tuiagent: revert tool double to "), new
    assert new[1] == "tuiagent: update tool double (edited outside tuiagent)|Dev", new
    assert git(repo, "show", "HEAD~1:.agent/tools/double.py") == edited  # the hand edit is a version of its own
    assert (tools_dir / "double.py").read_text() == tool_source("double")
