"""A catalog shared through git: sparse checkouts, conflicts left by stash/squash merges, old branches, read-only clones."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.catalog_support import tool_source
from tests.cli_in_process import run_in_process
from tests.gitrepo import git, init_repo
from tests.mounts import needs_mount, read_only
from tests.team_repos import diverged_from_a_teammate, merged_with_a_teammate, new_repo_with_double
from tui_agent.cli import main
from tui_agent.core.versioning.gitstore import CatalogGit


def tools(repo: Path, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["--project", str(repo), "tools", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def team_remote(tmp_path: Path) -> Path:
    """A teammate's repository with two committed tools (no tuiagent state of its own)."""
    origin = init_repo(tmp_path / "origin")
    tools_dir = origin / ".agent" / "tools"
    tools_dir.mkdir(parents=True)
    (tools_dir / "double.py").write_text(tool_source("double"))
    (tools_dir / "twice.py").write_text(tool_source("twice"))
    (origin / "src").mkdir()
    (origin / "src" / "lib.py").write_text("x = 1\n")
    git(origin, "add", "-A")
    git(origin, "commit", "-q", "-m", "team tools")
    return origin


def clone(origin: Path, target: Path, *options: str) -> Path:
    git(origin.parent, "clone", "-q", *options, str(origin), str(target))
    git(target, "config", "user.email", "b@example.com")
    git(target, "config", "user.name", "Bea")
    return target


def untracked_or_changed(repo: Path) -> list[str]:
    return git(repo, "status", "--porcelain", "--untracked-files=all").splitlines()


def test_a_sparse_checkout_without_agent_commits_no_deletion(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    origin = team_remote(tmp_path)
    mine = clone(origin, tmp_path / "mine", "--no-checkout")
    git(mine, "sparse-checkout", "set", "--no-cone", "/*", "!/.agent/")
    git(mine, "checkout", "-q", "main")
    assert not (mine / ".agent" / "tools" / "double.py").exists()
    head = git(mine, "rev-parse", "HEAD")
    code, _, err = tools(mine, capsys, "list", "--json")
    assert code == 0, err
    assert git(mine, "rev-parse", "HEAD") == head  # no "catch up" commit deleting the team's tools
    assert "2 tools committed but outside your sparse checkout (not deleted, not loaded): double, twice" \
        in tools(mine, capsys, "list")[1]
    assert git(mine, "ls-tree", "--name-only", "HEAD", ".agent/tools/").split() == [".agent/tools/double.py",
                                                                                   ".agent/tools/twice.py"]
    assert untracked_or_changed(mine) == []  # nor any local state showing up


def test_a_skip_worktree_tool_missing_from_disk_is_not_a_deletion(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mine = clone(team_remote(tmp_path), tmp_path / "mine")
    git(mine, "update-index", "--skip-worktree", ".agent/tools/twice.py")
    (mine / ".agent" / "tools" / "twice.py").unlink()
    (mine / ".agent" / "tools" / "double.py").write_text(tool_source("double", "return x + x"))
    code, _, err = tools(mine, capsys, "list", "--json")
    assert code == 0, err
    changed = git(mine, "show", "--name-status", "--format=%s", "HEAD").split("\n")
    assert changed[0].startswith("tuiagent: catch up tool double") and "twice" not in changed[0]
    assert [line for line in changed[1:] if line.strip()] == ["A\t.agent/.gitignore", "M\t.agent/tools/double.py"]
    assert ".agent/tools/twice.py" in git(mine, "ls-tree", "-r", "--name-only", "HEAD")
    # The git layer itself refuses, whoever asks: a journaled or direct deletion of a skip-worktree path defers.
    outcome = CatalogGit(mine).commit({".agent/tools/twice.py": None}, "tuiagent: remove tool twice")
    assert not outcome.committed and "skip-worktree" in (outcome.deferred_reason or "")
    assert ".agent/tools/twice.py" in git(mine, "ls-tree", "-r", "--name-only", "HEAD")


def conflicted_by_a_stash_pop(repo: Path) -> Path:
    """`double` edited on both sides in its docstring (a stash popped over a commit): the markers land inside the
    docstring, so the file still imports."""
    tool = new_repo_with_double(repo)
    tool.write_text(tool_source("double").replace("Double a number.", "Double a number (mine)."))
    git(repo, "stash", "-q")
    tool.write_text(tool_source("double").replace("Double a number.", "Double a number (theirs)."))
    git(repo, "commit", "-q", "-am", "theirs")
    git(repo, "stash", "pop", check=False)
    return tool


def assert_conflict_kept(repo: Path, head: str, capsys: pytest.CaptureFixture[str]) -> None:
    stages = git(repo, "ls-files", "-s", ".agent/tools/double.py").splitlines()
    listed = tools(repo, capsys, "list")
    assert listed[0] == 0 and "broken: unresolved conflict" in listed[1], listed
    records = json.loads(tools(repo, capsys, "list", "--json")[1])
    assert records[0]["status"] == "broken" and records[0]["error"]["stage"] == "conflict"
    shown = tools(repo, capsys, "show", "double")[1]
    assert "[broken: unresolved conflict]" in shown
    assert git(repo, "rev-parse", "HEAD") == head  # the markers were never committed
    assert git(repo, "ls-files", "-s", ".agent/tools/double.py").splitlines() == stages  # still unmerged
    assert "UU .agent/tools/double.py" in untracked_or_changed(repo)


def test_stash_pop_conflict_inside_a_docstring_is_broken_and_never_committed(tmp_path: Path,
                                                                           capsys: pytest.CaptureFixture[str]) -> None:
    repo = tmp_path / "repo"
    tool = conflicted_by_a_stash_pop(repo)
    assert "<<<<<<<" in tool.read_text() and not (repo / ".git" / "MERGE_HEAD").exists()
    assert_conflict_kept(repo, git(repo, "rev-parse", "HEAD"), capsys)


def test_squash_merge_conflict_is_broken_and_never_committed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = tmp_path / "repo"
    tool = new_repo_with_double(repo)
    git(repo, "checkout", "-q", "-b", "feature")
    tool.write_text(tool_source("double").replace("Double a number.", "Double a number (feature)."))
    git(repo, "commit", "-q", "-am", "feature")
    git(repo, "checkout", "-q", "main")
    tool.write_text(tool_source("double").replace("Double a number.", "Double a number (main)."))
    git(repo, "commit", "-q", "-am", "main")
    git(repo, "merge", "--squash", "feature", check=False)
    assert "<<<<<<<" in tool.read_text() and not (repo / ".git" / "MERGE_HEAD").exists()
    assert_conflict_kept(repo, git(repo, "rev-parse", "HEAD"), capsys)


def test_the_git_layer_never_commits_markers_or_over_unmerged_entries(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    tool = new_repo_with_double(repo)
    store = CatalogGit(repo)
    marked = tool_source("double").replace('"""Double', '"""\n<<<<<<< ours\nA\n=======\nB\n>>>>>>> theirs\nDouble').encode()
    outcome = store.commit({".agent/tools/double.py": marked}, "tuiagent: update tool double")
    assert not outcome.committed and "conflict markers (line 4)" in (outcome.deferred_reason or "")
    git(repo, "checkout", "-q", "-b", "other")
    tool.write_text(tool_source("double", "return x * 2"))
    git(repo, "commit", "-q", "-am", "other")
    git(repo, "checkout", "-q", "main")
    tool.write_text(tool_source("double", "return x + x"))
    git(repo, "commit", "-q", "-am", "main")
    git(repo, "cherry-pick", "other", check=False)
    git(repo, "cherry-pick", "--quit")  # CHERRY_PICK_HEAD gone, the unmerged entries stay
    stages = git(repo, "ls-files", "-s", ".agent/tools/double.py")
    outcome = store.commit({".agent/tools/double.py": tool_source("double", "return 3 * x").encode()}, "tuiagent: x")
    assert not outcome.committed and "unresolved conflicts in the index" in (outcome.deferred_reason or "")
    assert git(repo, "ls-files", "-s", ".agent/tools/double.py") == stages


def test_local_state_stays_out_of_git_on_an_old_branch_and_never_blocks_a_checkout(tmp_path: Path,
                                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    repo = init_repo(tmp_path / "repo")
    git(repo, "branch", "old")  # a branch from before the catalog
    (repo / ".agent" / "tools").mkdir(parents=True)
    (repo / ".agent" / "tools" / "double.py").write_text(tool_source("double"))
    assert tools(repo, capsys, "list")[0] == 0
    assert ".agent/.gitignore" in git(repo, "ls-tree", "-r", "--name-only", "HEAD")  # shared with the team
    git(repo, "checkout", "-q", "old")
    assert tools(repo, capsys, "list")[0] == 0  # state.db, sessions/, runs/, cache/ are all written here
    assert untracked_or_changed(repo) == []
    git(repo, "checkout", "-q", "main")  # nothing untracked stands in the way
    assert untracked_or_changed(repo) == []
    git(repo, "checkout", "-q", "old")
    (repo / ".agent" / ".gitignore").write_text("state.db\n")  # what an older tuiagent left on an old branch
    assert tools(repo, capsys, "list")[0] == 0
    assert untracked_or_changed(repo) == []
    git(repo, "checkout", "-q", "main")  # the leftover is ignored, so git may replace it
    linked = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", str(linked), "old")
    assert tools(linked, capsys, "list")[0] == 0
    assert untracked_or_changed(linked) == []
    exclude = (repo / ".git" / "info" / "exclude").read_text()
    assert exclude.count("/.agent/state.db\n") == 1  # the worktrees share the rules, written once


@needs_mount
@pytest.mark.timeout(300)
def test_a_read_only_fresh_clone_lists_shows_and_runs_tools(tmp_path: Path) -> None:
    mine = clone(team_remote(tmp_path), tmp_path / "mine")
    assert not (mine / ".agent" / "cache").exists() and not (mine / ".agent" / "recipes").exists()

    def cli(*argv: str) -> subprocess.CompletedProcess[str]:
        return run_in_process("--project", str(mine), *argv)

    with read_only(mine):  # a bind mount of the clone onto itself, read-only, until the block ends
        listed = cli("tools", "list", "--json")
        assert listed.returncode == 0, listed.stderr
        assert [(t["name"], t["status"]) for t in json.loads(listed.stdout)] == [("double", "unused"), ("twice", "unused")]
        shown = cli("tools", "show", "twice")
        assert shown.returncode == 0 and "def twice" in shown.stdout, shown.stderr
        ran = cli("tools", "run", "double", "--arg", "x=21")
        assert ran.returncode == 0 and ran.stdout.strip() == "42", ran.stderr
    assert untracked_or_changed(mine) == []


@pytest.mark.parametrize("how", ["merge", "rebase", "cherry-pick", "stash"])
def test_refusals_during_a_conflict_name_the_state_and_only_safe_ways_out(tmp_path: Path, how: str,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    repo = tmp_path / "repo"
    tool = diverged_from_a_teammate(repo)
    if how == "stash":
        git(repo, "reset", "-q", "--hard", "HEAD~1")
        tool.write_text(tool_source("double", "return x + x"))
        git(repo, "stash", "-q")
        git(repo, "merge", "-q", "--ff-only", "teammate")
        git(repo, "stash", "pop", check=False)
    else:
        git(repo, how, "teammate", check=False)
    stages = git(repo, "ls-files", "-s", ".agent/tools/double.py")
    assert len(stages.splitlines()) == 3
    expected = {"merge": "git merge --abort", "rebase": "git rebase --continue", "cherry-pick": "git cherry-pick --continue",
                "stash": "stash entry is kept"}[how]
    for verb in ("revert", "prune"):
        code, out, err = tools(repo, capsys, verb, "double")
        assert code != 0
        assert "unresolved conflict" in out + err and expected in out + err and "git add .agent/tools/double.py" in out + err
        assert "restore --staged" not in out + err
    assert git(repo, "ls-files", "-s", ".agent/tools/double.py") == stages


def test_history_lists_both_sides_of_a_merge_with_their_authors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = tmp_path / "repo"
    tool = merged_with_a_teammate(repo)
    full = git(repo, "log", "--full-history", "--format=%H", "--", ".agent/tools/double.py").split()
    assert len(full) == 4 and len(git(repo, "log", "--format=%H", "--", ".agent/tools/double.py").split()) < 4
    history = json.loads(tools(repo, capsys, "history", "double", "--json")[1])
    assert [entry["rev"] for entry in history] == full
    assert "teammate's double" in [entry["message"] for entry in history]
    assert [entry["merge"] for entry in history] == [True, False, False, False]
    text = tools(repo, capsys, "history", "double")[1]
    assert "Tea Mate  teammate's double" in text
    # the version picker of the TUI reads the same list, through the versioned-store interface
    code, out, err = tools(repo, capsys, "revert", "double", [e["rev"] for e in history if e["message"] == "teammate's double"][0])
    assert code == 0, err
    assert "return x * 2" in tool.read_text()


def test_a_shallow_clone_says_it_is_shallow_instead_of_no_earlier_version(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    origin = team_remote(tmp_path)
    (origin / ".agent" / "tools" / "double.py").write_text(tool_source("double", "return x + x"))
    git(origin, "commit", "-q", "-am", "double, second version")
    mine = tmp_path / "mine"
    git(tmp_path, "clone", "-q", "--depth=1", f"file://{origin}", str(mine))
    code, out, err = tools(mine, capsys, "revert", "double")
    assert code != 0 and "shallow clone" in out + err and "git fetch --unshallow" in out + err
    assert "shallow clone" in tools(mine, capsys, "history", "double")[1]
    code, out, err = tools(mine, capsys, "diff", "double")
    assert "shallow clone" in out + err


def test_a_deferred_prune_is_caught_up_under_its_own_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mine = clone(team_remote(tmp_path), tmp_path / "mine")
    hook = mine / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho 'lint says no' >&2\nexit 1\n")
    hook.chmod(0o755)
    code, out, err = tools(mine, capsys, "prune", "twice")
    assert code == 0 and "deferred" in out + err
    hook.unlink()
    assert tools(mine, capsys, "list")[0] == 0
    subject = git(mine, "log", "-1", "--format=%s").strip()
    assert subject.startswith("tuiagent: prune tool twice") and "not running" not in subject
    assert ".agent/tools/twice.py" not in git(mine, "ls-tree", "-r", "--name-only", "HEAD")


def test_restore_after_a_deferred_revert_and_a_deferred_prune_brings_back_the_reverted_version(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Both commits deferred (a pre-commit hook says no): HEAD still has the version before the revert, but what the
    prune removed is the reverted version, kept by no commit; restore brings that one back."""
    repo = tmp_path / "repo"
    tool = new_repo_with_double(repo)
    tool.write_text(tool_source("double", "return x + x"))
    git(repo, "commit", "-q", "-am", "double, second version")
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho 'lint says no' >&2\nexit 1\n")
    hook.chmod(0o755)
    for verb in ("revert", "prune", "restore"):
        code, out, err = tools(repo, capsys, verb, "double")
        assert code == 0 and "deferred" in out + err, (verb, out, err)
        if verb == "revert":
            assert tool.read_text() == tool_source("double")
    assert tool.read_text() == tool_source("double")  # the reverted version, not HEAD's `return x + x`
    hook.unlink()
    assert tools(repo, capsys, "list")[0] == 0
    assert git(repo, "show", "HEAD:.agent/tools/double.py") == tool_source("double")
    assert git(repo, "status", "--porcelain", "--", ".agent/tools").strip() == ""


@pytest.mark.timeout(120)
def test_a_save_killed_before_its_commit_is_caught_up_under_its_own_name(tmp_path: Path) -> None:
    mine = clone(team_remote(tmp_path), tmp_path / "mine")
    (mine / ".agent" / "tools" / "double.py").write_text(tool_source("double", "return x + x"))
    git(mine, "commit", "-q", "-am", "double, second version")
    hook = mine / ".git" / "hooks" / "pre-commit"
    started = mine / "hook-started"
    hook.write_text(f"#!/bin/sh\ntouch {started}\nsleep 60\n")
    hook.chmod(0o755)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    reverting = subprocess.Popen([sys.executable, "-m", "tui_agent.cli", "--project", str(mine), "tools", "revert", "double"],
                                 env=env, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not started.exists():
            assert time.monotonic() < deadline and reverting.poll() is None, "the revert never reached its commit"
            time.sleep(0.05)
    finally:
        os.killpg(reverting.pid, signal.SIGKILL)  # kill -9 mid-commit: the file is written, the commit is not
        reverting.wait()
    hook.unlink()
    started.unlink()
    assert "return 2 * x" in (mine / ".agent" / "tools" / "double.py").read_text()
    listed = subprocess.run([sys.executable, "-m", "tui_agent.cli", "--project", str(mine), "tools", "list"], env=env,
                            capture_output=True, text=True, timeout=60)
    assert listed.returncode == 0, listed.stderr
    subject = git(mine, "log", "-1", "--format=%s").strip()
    assert subject.startswith("tuiagent: revert tool double to") and "not running" not in subject
    assert "return 2 * x" in git(mine, "show", "HEAD:.agent/tools/double.py")


def test_stale_staging_folders_of_killed_runs_are_cleaned(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mine = clone(team_remote(tmp_path), tmp_path / "mine")
    assert tools(mine, capsys, "list")[0] == 0
    staging = mine / ".agent" / "cache" / "staging"
    dead = staging / "batch-999999-deadbeef"
    dead.mkdir(parents=True)
    (dead / "double.py").write_text("x = 1\n")
    old = staging / "double-0123456789abcdef.py"
    old.write_text("x = 1\n")
    os.utime(old, (time.time() - 7200, time.time() - 7200))
    live = staging / f"batch-{os.getpid()}-cafe"
    live.mkdir()
    assert tools(mine, capsys, "list")[0] == 0
    assert not dead.exists() and not old.exists() and live.exists()


async def test_a_conflicted_tool_is_flagged_in_the_prompt_index_and_the_catalog_pane(tmp_path: Path) -> None:
    from tests.catalog_support import opened_catalog, started_sandbox
    from tui_agent.core.agent.system_prompt import catalog_entries, catalog_index

    repo = tmp_path / "repo"
    conflicted_by_a_stash_pop(repo)
    async with started_sandbox(repo) as box, opened_catalog(repo, box) as catalog:
        index = catalog_index(catalog_entries(catalog), 2000)
        assert "- double: Double a number (theirs). [broken: unresolved conflict]" in index
        [item] = catalog.items()
        assert item.status == "broken" and item.summary.startswith("conflict: unresolved conflict")
        assert (await catalog.call_tool("double", {"x": 2})).value == 4  # the last good version still runs


async def test_a_tool_leaving_the_sparse_checkout_while_open_is_not_a_deletion(tmp_path: Path) -> None:
    from tests.catalog_support import opened_catalog, started_sandbox

    mine = clone(team_remote(tmp_path), tmp_path / "mine")
    async with started_sandbox(mine) as box, opened_catalog(mine, box) as catalog:
        head = git(mine, "rev-parse", "HEAD")
        git(mine, "sparse-checkout", "set", "--no-cone", "/*", "!/.agent/tools/twice.py")
        assert not (mine / ".agent" / "tools" / "twice.py").exists()
        assert await catalog.outside_edit({"twice"}) == ["twice"]
        assert git(mine, "rev-parse", "HEAD") == head
        assert catalog.git.pending() == {}  # not even a deferred deletion
        assert catalog.get("twice") is None and catalog.get("double") is not None


def test_a_planted_git_file_never_leads_the_ignore_rules_outside(tmp_path: Path) -> None:
    from tui_agent.core.versioning.localexclude import ensure_excluded

    repo = init_repo(tmp_path / "repo")
    project = repo / "sub"
    project.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (project / ".git").write_text(f"gitdir: {elsewhere}\n")  # what agent code could write in the project
    assert ensure_excluded(project) is False
    assert list(elsewhere.iterdir()) == []
    (project / ".git").unlink()
    assert ensure_excluded(project) is True  # the real repository above: rules for sub/.agent/
    assert "/sub/.agent/state.db" in (repo / ".git" / "info" / "exclude").read_text()


@pytest.mark.usefixtures("untrusted_config")
def test_history_in_an_untrusted_clone_shows_authors_merges_and_a_shallow_cut(tmp_path: Path,
                                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """A freshly cloned teammate's repository is untrusted: its read-only `tools history` tells the same truth."""
    repo = tmp_path / "repo"
    merged_with_a_teammate(repo)
    code, out, err = tools(repo, capsys, "history", "double")
    assert code == 0 and "not trusted" in err.lower(), err
    assert "Tea Mate  teammate's double" in out and "Dev  my double" in out
    history = json.loads(tools(repo, capsys, "history", "double", "--json")[1])
    assert [entry["merge"] for entry in history] == [True, False, False, False]
    shallow = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth=1", f"file://{repo}", str(shallow))
    assert "shallow clone" in tools(shallow, capsys, "history", "double")[1]


async def test_a_conflict_arriving_while_the_catalog_is_open_is_never_committed(tmp_path: Path) -> None:
    """`git stash pop` with a conflict inside a docstring while a TUI watches: the watcher's outside edit marks the
    tool broken, schedules no commit, and closing the catalog commits nothing either."""
    from tests.catalog_support import opened_catalog, started_sandbox

    repo = tmp_path / "repo"
    tool = new_repo_with_double(repo)
    async with started_sandbox(repo) as box:
        async with opened_catalog(repo, box) as catalog:
            tool.write_text(tool_source("double").replace("Double a number.", "Double a number (mine)."))
            git(repo, "stash", "-q")
            await catalog.outside_edit({"double"})
            tool.write_text(tool_source("double").replace("Double a number.", "Double a number (theirs)."))
            git(repo, "commit", "-q", "-am", "theirs")
            await catalog.outside_edit({"double"})
            await catalog.settle.flush()
            head = git(repo, "rev-parse", "HEAD")
            git(repo, "stash", "pop", check=False)
            stages = git(repo, "ls-files", "-s", ".agent/tools/double.py")
            assert len(stages.splitlines()) == 3 and "<<<<<<<" in tool.read_text()
            assert await catalog.outside_edit({"double"}) == ["double"]
            assert catalog.settle.waiting() == []  # no commit scheduled for the markers
            assert catalog.get("double").status_label == "broken: unresolved conflict"
            assert (await catalog.call_tool("double", {"x": 2})).value == 4  # the last good version runs
        assert git(repo, "rev-parse", "HEAD") == head
        assert git(repo, "ls-files", "-s", ".agent/tools/double.py") == stages


def test_a_linked_worktree_commits_its_catalog_on_its_own_branch(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mine = clone(team_remote(tmp_path), tmp_path / "mine")
    linked = tmp_path / "linked"
    git(mine, "worktree", "add", "-q", "-b", "feature", str(linked))
    main_head, main_index = git(mine, "rev-parse", "main"), git(mine, "ls-files", "-s")
    (linked / ".agent" / "tools" / "double.py").write_text(tool_source("double", "return x + x"))
    assert tools(linked, capsys, "list")[0] == 0
    assert git(linked, "log", "-1", "--format=%s%n%an").splitlines() == [
        "tuiagent: catch up tool double (changed while tuiagent was not running)", "Bea"]
    assert "return x + x" in git(linked, "show", "feature:.agent/tools/double.py")
    assert git(mine, "rev-parse", "main") == main_head and git(mine, "ls-files", "-s") == main_index
    assert untracked_or_changed(linked) == [] and untracked_or_changed(mine) == []
    code, out, err = tools(linked, capsys, "revert", "double")
    assert code == 0, err
    assert "return 2 * x" in (linked / ".agent" / "tools" / "double.py").read_text()
    assert git(linked, "log", "-1", "--format=%s").startswith("tuiagent: revert tool double to")
    assert git(mine, "rev-parse", "main") == main_head and "return 2 * x" in (mine / ".agent/tools/double.py").read_text()
    assert untracked_or_changed(linked) == [] and untracked_or_changed(mine) == []
