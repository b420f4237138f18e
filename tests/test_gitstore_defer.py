"""CatalogGit defers when git cannot take a commit (no repo, empty repo, detached HEAD, merge, rebase, failing hook) and catches up later."""

from __future__ import annotations

import stat
from pathlib import Path

from tests.gitrepo import git, init_repo, make_user_changes, user_state
from tests.mounts import needs_mount, read_only
from tui_agent.core.versioning.gitstore import CatalogGit

TOOL_A = ".agent/tools/tool_a.py"
TOOL_B = ".agent/tools/tool_b.py"
A = b"def tool_a() -> int:\n    return 1\n"
B = b"def tool_b() -> int:\n    return 2\n"


def put(root: Path, path: str, content: bytes) -> None:
    file = root / path
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_bytes(content)


def defer_then_catch_up(root: Path, expected_reason: str, resolve) -> None:  # noqa: ANN001 - a callable
    """Save tool_a while blocked (deferred, user work untouched), resolve, save tool_b: one commit holds both."""
    store = CatalogGit(root)
    before = user_state(root) if (root / ".git").exists() else None
    head_before = git(root, "rev-parse", "-q", "--verify", "HEAD", check=False) if before is not None else ""
    status = store.status()
    assert not status.can_commit and expected_reason in (status.reason or "")
    put(root, TOOL_A, A)
    outcome = store.commit({TOOL_A: A}, "tuiagent: add tool tool_a")
    assert not outcome.committed and outcome.sha is None
    assert expected_reason in (outcome.deferred_reason or "") and "deferred" in outcome.message
    assert list(store.pending()) == [TOOL_A] and "tuiagent: add tool tool_a" in store.pending()[TOOL_A]
    if before is not None:
        assert user_state(root) == before
        assert git(root, "rev-parse", "-q", "--verify", "HEAD", check=False) == head_before
    resolve()
    put(root, TOOL_B, B)
    caught_up = store.commit({TOOL_B: B}, "tuiagent: add tool tool_b")
    assert caught_up.committed, caught_up.message
    subject = git(root, "log", "-1", "--format=%s").strip()
    assert subject == "tuiagent: add tool tool_b (catching up 1 deferred change)"
    assert "tuiagent: add tool tool_a" in git(root, "log", "-1", "--format=%b")
    assert sorted(git(root, "show", "--name-only", "--format=", "HEAD").split()) == [TOOL_A, TOOL_B]
    assert store.pending() == {}
    assert git(root, "status", "--porcelain", "--", ".agent/tools") == ""
    assert git(root, "fsck", "--no-dangling").strip() == ""


def test_no_repository_then_init(tmp_path: Path) -> None:
    project = tmp_path / "plain"
    project.mkdir()
    (project / "main.py").write_text("x = 1\n")
    store = CatalogGit(project)
    assert store.status().has_repo is False
    assert store.history(TOOL_A) == [] and store.last_commit_for(TOOL_A) is None

    def resolve() -> None:
        CatalogGit.init_repo(project)
        git(project, "config", "user.email", "dev@example.com")
        git(project, "config", "user.name", "Dev")

    defer_then_catch_up(project, "no git repository", resolve)
    assert git(project, "ls-files").split() == [".agent/tools/tool_a.py", ".agent/tools/tool_b.py"]
    assert (project / "main.py").read_text() == "x = 1\n"


def test_empty_repository_then_first_user_commit(tmp_path: Path) -> None:
    project = init_repo(tmp_path / "empty", commit=False)
    (project / "first.txt").write_text("first\n")
    git(project, "add", "first.txt")
    (project / "draft.txt").write_text("draft\n")

    def resolve() -> None:
        git(project, "commit", "-q", "-m", "first")

    defer_then_catch_up(project, "no commits yet", resolve)
    assert "?? draft.txt" in git(project, "status", "--porcelain")


def test_detached_head_then_back_on_branch(dirty_repo: Path) -> None:
    git(dirty_repo, "checkout", "-q", "--detach")
    defer_then_catch_up(dirty_repo, "HEAD is detached", lambda: git(dirty_repo, "checkout", "-q", "main"))


def _diverge(repo: Path) -> None:
    git(repo, "checkout", "-q", "-b", "other")
    (repo / "app.py").write_text("print('other')\n")
    git(repo, "commit", "-q", "-am", "other side")
    git(repo, "checkout", "-q", "main")
    (repo / "app.py").write_text("print('main')\n")
    git(repo, "commit", "-q", "-am", "main side")


def test_merge_in_progress_with_a_real_conflict(repo: Path) -> None:
    _diverge(repo)
    git(repo, "merge", "other", check=False)
    assert (repo / ".git" / "MERGE_HEAD").exists()
    assert "<<<<<<<" in (repo / "app.py").read_text()
    defer_then_catch_up(repo, "a merge is in progress", lambda: git(repo, "merge", "--abort"))


def test_rebase_in_progress(repo: Path) -> None:
    _diverge(repo)
    git(repo, "checkout", "-q", "other")
    git(repo, "rebase", "main", check=False)
    assert (repo / ".git" / "rebase-merge").exists()
    defer_then_catch_up(repo, "a rebase is in progress", lambda: git(repo, "rebase", "--abort"))


def _hook(repo: Path, name: str, body: str) -> Path:
    hook = repo / ".git" / "hooks" / name
    hook.write_text("#!/bin/sh\n" + body)
    hook.chmod(hook.stat().st_mode | stat.S_IEXEC)
    return hook


def test_failing_pre_commit_hook_defers_and_is_never_bypassed(dirty_repo: Path) -> None:
    hook = _hook(dirty_repo, "pre-commit", "echo 'lint failed: tabs found' >&2\nexit 1\n")
    store = CatalogGit(dirty_repo)
    assert store.status().can_commit  # the hook only shows when committing
    before = user_state(dirty_repo)
    put(dirty_repo, TOOL_A, A)
    outcome = store.commit({TOOL_A: A}, "tuiagent: add tool tool_a")
    assert not outcome.committed
    assert "pre-commit hook failed" in (outcome.deferred_reason or "") and "lint failed: tabs found" in (outcome.deferred_reason or "")
    assert git(dirty_repo, "log", "-1", "--format=%s").strip() == "initial"
    assert user_state(dirty_repo) == before
    hook.write_text("#!/bin/sh\nexit 0\n")
    put(dirty_repo, TOOL_B, B)
    caught_up = store.commit({TOOL_B: B}, "tuiagent: add tool tool_b")
    assert caught_up.committed and "catching up 1 deferred change" in caught_up.message
    assert user_state(dirty_repo) == before


def test_hooks_see_the_catalog_commit_and_commit_msg_can_reword(repo: Path) -> None:
    log = repo.parent / "hook.log"
    _hook(repo, "pre-commit", f"git diff --cached --name-only > {log}\n")
    _hook(repo, "commit-msg", 'printf "\\nReviewed-by: hook\\n" >> "$1"\n')
    make_user_changes(repo)
    put(repo, TOOL_A, A)
    assert CatalogGit(repo).commit({TOOL_A: A}, "tuiagent: add tool tool_a").committed
    assert log.read_text().split() == [TOOL_A]  # the hook saw only the catalog change, not the user's staged README
    assert "Reviewed-by: hook" in git(repo, "log", "-1", "--format=%B")


def test_hook_staging_files_outside_agent_is_refused(dirty_repo: Path) -> None:
    _hook(dirty_repo, "pre-commit", "git add notes.txt\n")
    before = user_state(dirty_repo)
    put(dirty_repo, TOOL_A, A)
    outcome = CatalogGit(dirty_repo).commit({TOOL_A: A}, "tuiagent: add tool tool_a")
    assert not outcome.committed and "outside .agent/" in (outcome.deferred_reason or "")
    assert user_state(dirty_repo) == before


def test_later_pending_change_of_a_path_overrides_the_earlier_one(repo: Path) -> None:
    git(repo, "checkout", "-q", "--detach")
    store = CatalogGit(repo)
    store.commit({TOOL_A: A}, "tuiagent: add tool tool_a")
    store.commit({TOOL_A: A + b"# v2\n"}, "tuiagent: update tool tool_a")
    assert list(store.pending()) == [TOOL_A] and "update tool tool_a" in store.pending()[TOOL_A]
    git(repo, "checkout", "-q", "main")
    put(repo, TOOL_A, A + b"# v2\n")
    outcome = store.catch_up()
    assert outcome.committed
    assert git(repo, "show", f"HEAD:{TOOL_A}") == (A + b"# v2\n").decode()
    assert "catching up 1 deferred change" in git(repo, "log", "-1", "--format=%s")


def test_deferred_change_is_dropped_if_the_path_was_committed_differently_since(repo: Path) -> None:
    git(repo, "checkout", "-q", "--detach")
    store = CatalogGit(repo)
    store.commit({TOOL_A: A}, "tuiagent: add tool tool_a")
    git(repo, "checkout", "-q", "main")
    put(repo, TOOL_A, b"def tool_a() -> int:\n    return 42\n")
    git(repo, "add", TOOL_A)
    git(repo, "commit", "-q", "-m", "hand-written tool_a")
    put(repo, TOOL_B, B)
    outcome = store.commit({TOOL_B: B}, "tuiagent: add tool tool_b")
    # dropped either because the disk no longer matches the journal or because HEAD moved past its base
    assert outcome.committed and any("dropped" in n and ".agent/tools/tool_a.py" in n for n in outcome.notices)
    assert "return 42" in git(repo, "show", f"HEAD:{TOOL_A}")
    assert store.pending() == {}


def test_journaled_change_already_committed_is_not_repeated(repo: Path) -> None:
    store = CatalogGit(repo)
    put(repo, TOOL_A, A)
    first = store.commit({TOOL_A: A}, "tuiagent: add tool tool_a")
    # as if the process died after moving the branch but before clearing the journal
    git(repo, "update-index", "--force-remove", TOOL_A)
    git(repo, "checkout", "-q", "--detach")
    store.commit({TOOL_A: A}, "tuiagent: update tool tool_a")
    git(repo, "checkout", "-q", "main")
    outcome = store.catch_up()
    assert not outcome.committed and outcome.deferred_reason is None
    assert git(repo, "rev-parse", "HEAD").strip() == first.sha
    assert git(repo, "status", "--porcelain", "--", TOOL_A) == ""
    assert store.pending() == {}


@needs_mount
def test_a_branch_git_cannot_move_defers_with_gits_reason_not_as_a_race(repo: Path) -> None:
    """update-ref failing with the branch unmoved (here its folder is read-only; on a full disk, its lock cannot be
    written) is no race with another commit: the commit defers at once naming git's error, and catches up later."""
    head = git(repo, "rev-parse", "HEAD")
    store = CatalogGit(repo)
    put(repo, TOOL_A, A)
    with read_only(repo / ".git" / "refs" / "heads"):
        outcome = store.commit({TOOL_A: A}, "tuiagent: add tool tool_a")
    assert not outcome.committed and git(repo, "rev-parse", "HEAD") == head
    assert "another commit raced" not in outcome.message and "could not move refs/heads/" in outcome.message, outcome.message
    assert "Read-only file system" in outcome.message and list(store.pending()) == [TOOL_A]
    assert store.catch_up(store.journal_subject()).committed and store.pending() == {}
    assert git(repo, "log", "-1", "--format=%s").startswith("tuiagent: add tool tool_a")
    assert git(repo, "show", "HEAD:" + TOOL_A) == A.decode() and git(repo, "fsck", "--no-dangling").strip() == ""
