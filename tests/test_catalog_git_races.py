"""Catalog commits never race the person's git: real hooks that wait for a file, a person's `git commit -am` during
the post-commit hook, a branch switch during the pre-commit hook, and a person's `git commit` waiting in its editor."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from pathlib import Path

from tests.gitrepo import git, init_repo
from tui_agent.core.versioning.gitstore import CatalogGit, CommitOutcome

TOOL = ".agent/tools/tool_a.py"
SOURCE = b"def tool_a() -> int:\n    return 1\n"


def hook(repo: Path, name: str, flag: Path, go: Path) -> None:
    path = repo / ".git" / "hooks" / name
    path.write_text(f"#!/bin/sh\ntouch '{flag}'\nwhile [ ! -e '{go}' ]; do sleep 0.05; done\n")
    path.chmod(0o755)


def wait_for(path: Path, timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.02)


class Commit(threading.Thread):
    """CatalogGit.commit of the new tool, in a thread (the hooks block it until the test says go)."""

    def __init__(self, repo: Path) -> None:
        super().__init__()
        self.repo = repo
        self.outcome: CommitOutcome | None = None

    def run(self) -> None:
        (self.repo / TOOL).parent.mkdir(parents=True, exist_ok=True)
        (self.repo / TOOL).write_bytes(SOURCE)
        self.outcome = CatalogGit(self.repo).commit({TOOL: SOURCE}, "tuiagent: add tool tool_a")


def test_a_commit_am_during_the_post_commit_hook_keeps_the_new_tool(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "project")
    flag, go = tmp_path / "hook-started", tmp_path / "go"
    hook(repo, "post-commit", flag, go)
    commit = Commit(repo)
    commit.start()
    wait_for(flag)
    (repo / "app.py").write_text("print('mine')\n")
    flag.unlink()
    go.touch()  # the person's own commit runs the hook too: let both through
    git(repo, "commit", "-q", "-am", "my change")
    commit.join(30)
    assert commit.outcome is not None and commit.outcome.committed, commit.outcome
    assert TOOL in git(repo, "ls-tree", "-r", "--name-only", "HEAD"), "the person's commit deleted the new tool"
    assert git(repo, "log", "-1", "--format=%s").strip() == "my change"


def test_a_branch_switch_during_the_pre_commit_hook_stages_nothing_in_the_other_branch(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "project")
    flag, go = tmp_path / "hook-started", tmp_path / "go"
    hook(repo, "pre-commit", flag, go)
    commit = Commit(repo)
    commit.start()
    wait_for(flag)
    git(repo, "checkout", "-q", "-b", "feature")
    go.touch()
    commit.join(30)
    assert commit.outcome is not None and not commit.outcome.committed
    assert "another branch" in (commit.outcome.deferred_reason or ""), commit.outcome
    assert git(repo, "diff", "--cached", "--name-only") == ""  # the person's next plain commit carries nothing
    assert TOOL not in git(repo, "ls-tree", "-r", "--name-only", "main")


def test_a_person_commit_waiting_in_its_editor_is_not_broken(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "project")
    editing, go = tmp_path / "editing", tmp_path / "go"
    editor = tmp_path / "editor.sh"
    editor.write_text(f"#!/bin/sh\ntouch '{editing}'\nwhile [ ! -e '{go}' ]; do sleep 0.05; done\n"
                      "echo 'my careful message' > \"$1\"\n")
    editor.chmod(0o755)
    (repo / "app.py").write_text("print('mine')\n")
    git(repo, "add", "app.py")
    person = subprocess.Popen(["git", "commit"], cwd=repo, env={**os.environ, "GIT_EDITOR": str(editor)},
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for(editing)
    commit = Commit(repo)
    commit.start()
    time.sleep(1.0)  # the catalog commit is waiting now
    go.touch()
    _out, err = person.communicate(timeout=30)
    commit.join(30)
    assert person.returncode == 0, err
    assert commit.outcome is not None and commit.outcome.committed, commit.outcome
    subjects = git(repo, "log", "--format=%s", "-3").splitlines()
    assert subjects[:2] == ["tuiagent: add tool tool_a", "my careful message"]
