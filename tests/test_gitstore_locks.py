"""Git lock files: a lock held by a live process is respected (the commit defers); one left by a killed process is removed and reported."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from tests.gitrepo import git, user_state
from tui_agent.core.versioning.gitlocks import inspect_lock
from tui_agent.core.versioning.gitstore import CatalogGit

TOOL = ".agent/tools/tool_a.py"
CONTENT = b"def tool_a() -> int:\n    return 1\n"

HOLD_OPEN = "import sys, time\nf = open(sys.argv[1], 'a')\nprint('ready', flush=True)\ntime.sleep(60)\n"


def age(path: Path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


def test_lock_held_open_by_a_live_process_defers_then_is_cleared_once_it_dies(dirty_repo: Path) -> None:
    lock = dirty_repo / ".git" / "index.lock"
    holder = subprocess.Popen([sys.executable, "-c", HOLD_OPEN, str(lock)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        age(lock, 60)
        store = CatalogGit(dirty_repo)
        before = user_state(dirty_repo)  # git status works with the lock present
        status = store.status()
        assert not status.can_commit and "index.lock" in (status.reason or "") and str(holder.pid) in (status.reason or "")
        (dirty_repo / TOOL).parent.mkdir(parents=True)
        (dirty_repo / TOOL).write_bytes(CONTENT)
        outcome = store.commit({TOOL: CONTENT}, "tuiagent: add tool tool_a")
        assert not outcome.committed and "index.lock" in (outcome.deferred_reason or "")
        assert lock.exists()
    finally:
        holder.kill()
        holder.wait()
    assert lock.exists()  # the killed holder left it behind
    retried = store.catch_up()
    assert retried.committed, retried.message
    assert any("stale .git/index.lock" in notice for notice in retried.notices)
    assert "stale .git/index.lock" in retried.message
    assert not lock.exists()
    assert user_state(dirty_repo) == before
    assert git(dirty_repo, "fsck", "--no-dangling").strip() == ""


def test_fresh_lock_without_holder_is_respected_until_it_is_old(repo: Path) -> None:
    lock = repo / ".git" / "index.lock"
    lock.write_bytes(b"")
    (repo / TOOL).parent.mkdir(parents=True, exist_ok=True)
    (repo / TOOL).write_bytes(CONTENT)  # the caller writes the file before committing it (the contract)
    store = CatalogGit(repo, min_stale_lock_age_s=5.0)
    outcome = store.commit({TOOL: CONTENT}, "tuiagent: add tool tool_a")
    assert not outcome.committed and "index.lock" in (outcome.deferred_reason or "") and lock.exists()
    age(lock, 30)
    outcome = store.catch_up()
    assert outcome.committed and not lock.exists()


def test_lock_while_a_git_process_works_in_the_repo_is_live(repo: Path) -> None:
    lock = repo / ".git" / "index.lock"
    lock.write_bytes(b"")
    age(lock, 60)
    waiting_git = subprocess.Popen(["git", "hash-object", "--stdin"], cwd=repo, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    try:
        time.sleep(0.05)
        inspection = inspect_lock(lock, (repo, repo / ".git"))
        assert inspection.state == "live" and str(waiting_git.pid) in (inspection.holder or "")
    finally:
        waiting_git.communicate(b"")
    assert inspect_lock(lock, (repo, repo / ".git")).state == "stale"
    assert inspect_lock(repo / ".git" / "absent.lock", (repo,)).state == "absent"


def test_stale_branch_ref_lock_and_head_lock_are_removed(repo: Path) -> None:
    ref_lock = repo / ".git" / "refs" / "heads" / "main.lock"
    head_lock = repo / ".git" / "HEAD.lock"
    for lock in (ref_lock, head_lock):
        lock.write_text("0" * 40 + "\n")
        age(lock, 60)
    store = CatalogGit(repo)
    assert store.status().can_commit
    (repo / TOOL).parent.mkdir(parents=True)
    (repo / TOOL).write_bytes(CONTENT)
    outcome = store.commit({TOOL: CONTENT}, "tuiagent: add tool tool_a")
    assert outcome.committed, outcome.message
    assert not ref_lock.exists() and not head_lock.exists()
    assert len([n for n in outcome.notices if "stale" in n]) == 2
    assert git(repo, "fsck", "--no-dangling").strip() == ""
