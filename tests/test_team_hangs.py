"""No command waits for ever: bounded lock waits, and git commands and hooks that hang killed at their bounds."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.catalog_support import tool_source
from tests.gitrepo import git

from tui_agent.core.versioning.snapshot import snapshot
from tui_agent.core.versioning.writelock import LockTimeout, WriterLock


async def test_a_writer_lock_wait_is_bounded_and_names_what_it_waited_for(repo: Path) -> None:
    first, second = WriterLock(repo), WriterLock(repo)
    with first.held():
        with pytest.raises(LockTimeout, match=r"\.agent/cache/writer\.lock.*another tuiagent process"):
            async with second.hold(timeout_s=0.3):
                pass
        with pytest.raises(LockTimeout, match=r"writer\.lock"):
            with second.held(timeout_s=0.3):
                pass
    async with second.hold(timeout_s=0.3):
        pass


def test_a_git_command_that_hangs_is_killed_at_its_bound_with_a_message_naming_it(repo: Path) -> None:
    """A clean filter that never returns (the person's own git config) blocks `git hash-object --path`: the catch-up
    commit's git command is killed at its bound and the command ends saying which git command it waited for."""
    stuck = f"sleep 987.{os.getpid()}"  # this test's own: no other run's leftovers count
    git(repo, "config", "filter.stuck.clean", stuck)
    (repo / ".gitattributes").write_text("*.py filter=stuck\n")
    tools_dir = repo / ".agent" / "tools"
    tools_dir.mkdir(parents=True)
    (tools_dir / "double.py").write_text(tool_source("double"))  # not committed yet: the catch-up hashes it
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent), "TUIAGENT_GIT_TIMEOUT_S": "2"}
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "tui_agent.cli", "--project", str(repo), "tools", "list"],
                          env=env, capture_output=True, text=True, timeout=100)
    took = time.monotonic() - started
    output = done.stdout + done.stderr
    assert took < 60
    assert done.returncode == 0 and "double" in done.stdout, output  # the list still comes, the commit defers
    assert 'the command "git hash-object' in output and "did not complete in 2 secs" in output, output
    assert "commit deferred" in output, output
    assert not [line for line in subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout.splitlines()
                if stuck in line], "the hanging filter was left running"
    git(repo, "config", "--unset", "filter.stuck.clean")  # the filter fixed: nothing was lost, the next run commits it
    again = subprocess.run([sys.executable, "-m", "tui_agent.cli", "--project", str(repo), "tools", "list"],
                           env=env, capture_output=True, text=True, timeout=100)
    assert again.returncode == 0, again.stderr
    assert git(repo, "show", "HEAD:.agent/tools/double.py") == tool_source("double")


def test_the_prompts_git_status_is_bounded_and_says_it_did_not_finish(repo: Path, tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A clean filter of the person's own (global config: the git door keeps it) that never answers blocks
    `git status` (the repository glance in the system prompt) on a changed file. (A repository's own fsmonitor or
    filter never runs: tests/test_git_door.py.)"""
    hook = tmp_path / "filter.sh"
    hook.write_text("#!/bin/sh\nsleep 986\n")
    hook.chmod(0o755)
    global_config = tmp_path / "gitconfig"
    global_config.write_text(f'[filter "slow"]\n\tclean = {hook}\n')
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(global_config))
    (repo / ".gitattributes").write_text("app.py filter=slow\n")
    (repo / "app.py").write_text("print('HELLO')\n")  # same size: git must compare the content, through the filter
    monkeypatch.setenv("TUIAGENT_GIT_TIMEOUT_S", "2")
    started = time.monotonic()
    glance = snapshot(repo)
    assert time.monotonic() - started < 30
    assert glance.status == ["(git status did not finish within 2 s: the work tree's state is unknown)"]
    assert glance.recent and glance.recent[0].endswith(" initial")


def test_a_hook_that_hangs_defers_the_commit_at_its_bound_and_leaves_nothing_running(repo: Path,
                                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A pre-commit hook whose child never ends (a watcher-style lint daemon left in the foreground): the commit defers
    naming the hook, and the hook's whole process group is stopped (its child held the output pipe open)."""
    from tui_agent.core.versioning import commithooks
    from tui_agent.core.versioning.gitstore import CatalogGit

    stuck = f"sleep 985.{os.getpid()}"
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text(f"#!/bin/sh\n{stuck}\necho done\n")
    hook.chmod(0o755)
    monkeypatch.setattr(commithooks, "HOOK_TIMEOUT_S", 1)
    head = git(repo, "rev-parse", "HEAD")
    started = time.monotonic()
    outcome = CatalogGit(repo).commit({".agent/tools/double.py": tool_source("double").encode()}, "tuiagent: add tool double")
    assert time.monotonic() - started < 30
    assert not outcome.committed and outcome.deferred_reason is not None
    assert outcome.deferred_reason.startswith("the pre-commit hook timed out after 1s"), outcome.deferred_reason
    assert git(repo, "rev-parse", "HEAD") == head
    assert not [line for line in subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout.splitlines()
                if stuck in line], "the hook's child was left running"


def test_a_wait_for_the_gitstore_lock_is_bounded_and_names_the_lock(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another process holding `.agent/cache/gitstore.lock` (a commit stuck in a hook): this commit defers, naming it."""
    from tui_agent.core.versioning import gitpending
    from tui_agent.core.versioning.gitstore import CatalogGit

    lock = repo / ".agent" / "cache" / "gitstore.lock"
    lock.parent.mkdir(parents=True)
    holder = subprocess.Popen([sys.executable, "-c", "import fcntl, sys, time; f = open(sys.argv[1], 'a'); "
                               "fcntl.flock(f, fcntl.LOCK_EX); print('held', flush=True); time.sleep(600)", str(lock)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        monkeypatch.setattr(gitpending, "LOCK_WAIT_S", 0.5)
        started = time.monotonic()
        outcome = CatalogGit(repo).commit({".agent/tools/double.py": tool_source("double").encode()}, "tuiagent: add")
        assert time.monotonic() - started < 10
        assert not outcome.committed
        assert f"waited 0.5 s for {lock}, held by another process committing the catalog" in outcome.message
    finally:
        holder.kill()
        holder.wait(timeout=30)
    assert CatalogGit(repo).commit({".agent/tools/double.py": tool_source("double").encode()}, "tuiagent: add").committed
