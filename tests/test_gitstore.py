"""CatalogGit on real repositories: commits touch only `.agent/`, the user's work stays byte-identical, and the history queries."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.gitrepo import git, user_state
from tui_agent.core.versioning.gitstore import CatalogGit, catch_up_message

TOOL = ".agent/tools/count_lines.py"
V1 = b'def count_lines(path: str) -> int:\n    """Count lines.\n\n    Args:\n        path: a file\n    """\n    return 1\n'
V2 = V1.replace(b"return 1", b"return 2")


def write(repo: Path, path: str, content: bytes | None) -> None:
    """What the catalog does before committing: put the file in the work tree (or remove it)."""
    file = repo / path
    if content is None:
        file.unlink()
    else:
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_bytes(content)


def save(store: CatalogGit, repo: Path, path: str, content: bytes | None, message: str):
    write(repo, path, content)
    return store.commit({path: content}, message)


def committed_paths(repo: Path, rev: str = "HEAD") -> list[str]:
    return [line for line in git(repo, "show", "--name-only", "--format=", rev).splitlines() if line]


def test_add_update_delete_keep_user_work_byte_identical(dirty_repo: Path) -> None:
    before = user_state(dirty_repo)
    store = CatalogGit(dirty_repo)
    added = save(store, dirty_repo, TOOL, V1, "tuiagent: add tool count_lines")
    assert added.committed and added.sha and added.deferred_reason is None
    assert committed_paths(dirty_repo) == [TOOL]
    assert git(dirty_repo, "log", "-1", "--format=%s").strip() == "tuiagent: add tool count_lines"
    assert user_state(dirty_repo) == before
    updated = save(store, dirty_repo, TOOL, V2, "tuiagent: update tool count_lines")
    assert updated.committed and committed_paths(dirty_repo) == [TOOL]
    assert user_state(dirty_repo) == before
    deleted = save(store, dirty_repo, TOOL, None, "tuiagent: prune tool count_lines")
    assert deleted.committed and committed_paths(dirty_repo) == [TOOL]
    assert git(dirty_repo, "cat-file", "-t", f"HEAD:{TOOL}", check=False) == ""
    assert user_state(dirty_repo) == before
    # the staged change is still staged, not committed by us
    assert "staged line" in git(dirty_repo, "diff", "--cached", "README.md")
    assert "README.md" not in git(dirty_repo, "log", "--format=", "--name-only", "HEAD~3..HEAD")
    # git status is clean for the catalog paths, and fsck is clean
    assert ".agent/tools" not in git(dirty_repo, "status", "--porcelain")
    assert git(dirty_repo, "fsck", "--no-dangling").strip() == ""


def test_several_paths_in_one_commit_and_nothing_to_commit(repo: Path) -> None:
    store = CatalogGit(repo)
    other = ".agent/tools/other.py"
    write(repo, TOOL, V1)
    write(repo, other, V2)
    outcome = store.commit({TOOL: V1, other: V2}, "tuiagent: add tools")
    assert outcome.committed
    assert sorted(committed_paths(repo)) == sorted([TOOL, other])
    again = store.commit({TOOL: V1}, "tuiagent: update tool count_lines")
    assert not again.committed and again.deferred_reason is None and "nothing to commit" in again.message
    assert git(repo, "rev-parse", "HEAD").strip() == outcome.sha


@pytest.mark.parametrize("bad", ["README.md", "../x.py", "/etc/passwd", ".agent/../app.py", ".agent", ".agentx/y.py", "", "a\nb"])
def test_refuses_paths_outside_agent(repo: Path, bad: str) -> None:
    head = git(repo, "rev-parse", "HEAD")
    with pytest.raises(ValueError):
        CatalogGit(repo).commit({bad: b"x"}, "tuiagent: nope")
    assert git(repo, "rev-parse", "HEAD") == head


def test_staged_change_of_a_catalog_path_by_hand_is_replaced_by_the_committed_version(repo: Path) -> None:
    store = CatalogGit(repo)
    save(store, repo, TOOL, V1, "tuiagent: add tool count_lines")
    write(repo, TOOL, V2)
    git(repo, "add", TOOL)
    outcome = store.commit({TOOL: V2}, "tuiagent: update tool count_lines")
    assert outcome.committed
    assert git(repo, "status", "--porcelain", "--", TOOL) == ""


def test_history_show_diff_and_last_commit(repo: Path) -> None:
    store = CatalogGit(repo)
    first = save(store, repo, TOOL, V1, "tuiagent: add tool count_lines").sha
    second = save(store, repo, TOOL, V2, "tuiagent: update tool count_lines").sha
    third = save(store, repo, TOOL, None, "tuiagent: prune tool count_lines").sha
    history = store.history(TOOL)
    assert [entry.rev for entry in history] == [third, second, first]
    assert history[0].deleted and not history[1].deleted
    assert history[1].message == "tuiagent: update tool count_lines"
    assert history[1].short == second[: len(history[1].short)] and history[1].author == "Dev"
    assert history[1].date[:4].isdigit() and "T" in history[1].date
    assert store.show(TOOL, first) == V1 and store.show(TOOL, second) == V2 and store.show(TOOL, third) is None
    assert store.last_commit_for(TOOL) == third
    diff = store.diff(TOOL, first, second)
    assert "-    return 1" in diff and "+    return 2" in diff and f"a/{TOOL}" in diff
    assert store.diff(TOOL, first, first) == ""
    write(repo, TOOL, V1)
    worktree_diff = store.diff(TOOL, second)
    assert "-    return 2" in worktree_diff and "+    return 1" in worktree_diff
    assert store.last_version_before_deletion(TOOL) == (second, V2)
    with pytest.raises(ValueError):
        store.show(TOOL, "no-such-rev")


def test_last_version_before_deletion_none_while_present(repo: Path) -> None:
    store = CatalogGit(repo)
    save(store, repo, TOOL, V1, "tuiagent: add tool count_lines")
    assert store.last_version_before_deletion(TOOL) is None
    assert store.last_version_before_deletion(".agent/tools/never.py") is None
    assert store.history(".agent/tools/never.py") == []


def test_changed_files_and_diff_since_cover_committed_staged_unstaged_untracked(repo: Path) -> None:
    store = CatalogGit(repo)
    (repo / "src").mkdir()
    (repo / "src" / "a.py").write_text("a = 1\n")
    (repo / "src" / "b.py").write_text("b = 1\n")
    git(repo, "add", "src")
    git(repo, "commit", "-q", "-m", "src")
    since = save(store, repo, TOOL, V1, "tuiagent: add tool count_lines").sha
    assert since is not None
    assert store.changed_files_since(since, ["src/**/*.py", "app.py"]) == []
    assert store.diff_files_since(since, ["src/**/*.py"]) == ""
    (repo / "src" / "a.py").write_text("a = 2\n")
    git(repo, "commit", "-q", "-am", "change a")          # committed since
    (repo / "src" / "b.py").write_text("b = 2\n")
    git(repo, "add", "src/b.py")                            # staged
    (repo / "app.py").write_text("print('changed')\n")     # unstaged
    (repo / "src" / "new.py").write_text("new = 1\n")      # untracked
    (repo / "README.md").write_text("not watched\n")
    assert store.changed_files_since(since, ["src/**/*.py", "app.py"]) == ["app.py", "src/a.py", "src/b.py", "src/new.py"]
    diff = store.diff_files_since(since, ["src/**/*.py", "app.py"])
    for expected in ("+a = 2", "+b = 2", "+print('changed')", "+new = 1", "b/src/new.py"):
        assert expected in diff
    assert "not watched" not in diff
    assert store.changed_files_since(since, ["src/a.py"]) == ["src/a.py"]
    with pytest.raises(ValueError):
        store.changed_files_since("0" * 40, ["src/a.py"])


def test_project_in_a_subfolder_of_the_repository(repo: Path) -> None:
    project = repo / "sub"
    project.mkdir()
    store = CatalogGit(project)
    before = user_state(repo)
    write(project, TOOL, V1)
    outcome = store.commit({TOOL: V1}, "tuiagent: add tool count_lines")
    assert outcome.committed
    assert committed_paths(repo) == [f"sub/{TOOL}"]
    after = user_state(repo)
    after["index"] = "\n".join(line for line in after["index"].splitlines() if "\tsub/.agent/" not in line)
    assert {key: value for key, value in after.items() if "sub/.agent/" not in key} == before
    assert store.history(TOOL)[0].rev == outcome.sha
    assert store.show(TOOL, "HEAD") == V1
    (project / "data.txt").write_text("x\n")
    assert store.changed_files_since(outcome.sha or "", ["*.txt"]) == ["data.txt"]


def test_catch_up_message() -> None:
    assert catch_up_message("tuiagent: add tool a", []) == "tuiagent: add tool a"
    text = catch_up_message("tuiagent: add tool a", ["tuiagent: add tool b [.agent/tools/b.py]"])
    assert text.splitlines()[0] == "tuiagent: add tool a (catching up 1 deferred change)"
    assert "- tuiagent: add tool b [.agent/tools/b.py]" in text


def test_init_repo_creates_a_first_commit_then_commits_work(tmp_path: Path) -> None:
    project = tmp_path / "fresh"
    (project / ".agent").mkdir(parents=True)
    (project / ".agent" / ".gitignore").write_text("cache/\n")
    (project / "main.py").write_text("print(1)\n")
    store = CatalogGit.init_repo(project)
    status = store.status()
    assert status.has_repo and status.can_commit and status.head
    assert committed_paths(project) == [".agent/.gitignore"]
    assert "?? main.py" in git(project, "status", "--porcelain")
    write(project, TOOL, V1)
    assert store.commit({TOOL: V1}, "tuiagent: add tool count_lines").committed
    assert "main.py" not in git(project, "ls-files")


def test_works_with_an_existing_repo_untouched_by_init_repo(repo: Path) -> None:
    head = git(repo, "rev-parse", "HEAD")
    store = CatalogGit.init_repo(repo)
    assert store.status().can_commit and git(repo, "rev-parse", "HEAD") == head
