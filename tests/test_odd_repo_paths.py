"""A repository whose folder holds `$`, spaces, quotes, a newline or unicode keeps its undo and its catalog commits
(GitPython expanded `ci$HOME` to another folder: every turn said "no git repository")."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.gitrepo import git, init_repo
from tests.test_undo_interrupted import agent_turn, service
from tui_agent.core.agent.sessions import SessionLog
from tui_agent.core.versioning.gitstore import CatalogGit
from tui_agent.core.runtime_state import catalog_of

NAMES = ["ci$HOME", "ci${USER}x", "with space", "quote'and\"double", "new\nline", "ünïcødé-名前"]


@pytest.mark.parametrize("name", NAMES)
async def test_undo_and_catalog_commits_work_in_an_odd_folder(tmp_path: Path, name: str) -> None:
    repo = init_repo(tmp_path / name / "project")
    session = SessionLog(repo / ".agent" / "sessions" / "s1.jsonl", "s1")
    undo = service(repo)
    await agent_turn(undo, session, "edit", {"app.py": "print('agent')\n"})
    assert undo.last_turn_paths() == ["app.py"]
    result = await undo.undo_last(session)
    assert result.ok, result.message
    assert (repo / "app.py").read_text() == "print('hello')\n"
    tool = ".agent/tools/odd.py"
    (repo / ".agent" / "tools").mkdir(parents=True)
    (repo / tool).write_bytes(b"def odd() -> int:\n    return 1\n")
    outcome = CatalogGit(repo).commit({tool: b"def odd() -> int:\n    return 1\n"}, "tuiagent: add tool odd")
    assert outcome.committed, outcome
    assert tool in git(repo, "ls-tree", "-r", "--name-only", "HEAD")


async def test_a_detached_head_is_said_at_open(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tui_agent.core.agent.permissions import deny_all
    from tui_agent.core.runtime import open_runtime

    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    git(repo, "checkout", "-q", "--detach")
    runtime = await open_runtime(repo, approve=deny_all, sandbox_tier="rlimits", watch=False)
    try:
        assert any(problem.startswith("HEAD is detached") and "deferred" in problem for problem in runtime.core.problems)
        assert catalog_of(runtime) is not None and "HEAD is detached" in (catalog_of(runtime).commit_blocker() or "")
    finally:
        await runtime.aclose()


async def test_a_repository_named_by_git_dir_and_git_work_tree_is_refused_with_a_clear_reason(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tui_agent.core.agent.permissions import deny_all
    from tui_agent.core.runtime import open_runtime

    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    work, git_dir = tmp_path / "work", tmp_path / "store.git"
    work.mkdir()
    git(tmp_path, "--git-dir", str(git_dir), "--work-tree", str(work), "init", "-q", "-b", "main")
    (work / "app.py").write_text("print('hello')\n")
    monkeypatch.setenv("GIT_DIR", str(git_dir))
    monkeypatch.setenv("GIT_WORK_TREE", str(work))
    runtime = await open_runtime(work, approve=deny_all, sandbox_tier="rlimits", watch=False,
                                 ask_init_git=lambda project: False)
    try:
        assert runtime.core.undo is None
        assert any("GIT_DIR and GIT_WORK_TREE are set" in problem and "unset them" in problem
                   for problem in runtime.core.problems), runtime.core.problems
    finally:
        await runtime.aclose()
    assert not (work / ".git").exists()  # no repository was made in the work tree behind the person's back
