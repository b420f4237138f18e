"""One door to git: a repository that comes with its `.git` runs none of its command-running configuration on the
host (fsmonitor, filters, textconv, external diffs, pagers, editors, signing, hooks, includes) through any git
tuiagent starts, before trust; trust lists and approves it; a nested repository is never looked into."""

from __future__ import annotations

import ast
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fake_messages_api import FakeMessagesAPI, reply, text, tool_use
from tests.git_door_helpers import hostile_repo, ran
from tests.gitrepo import git, init_repo
from tui_agent.cli import main
from tui_agent.core.project import Project
from tui_agent.core.rootfind import ProjectRootError, locate
from tui_agent.core.trust import check, grant
from tui_agent.core.versioning.checkpoints import Checkpoints
from tui_agent.core.versioning.gitstore import CatalogGit
from tui_agent.core.versioning.listing import git_project_files
from tui_agent.core.versioning.snapshot import snapshot
from tui_agent.core.versioning.trees import CommitTrees

VERSIONING = Path(__file__).resolve().parent.parent / "tui_agent" / "core" / "versioning"


def every_door_operation(project: Path) -> None:
    """What tuiagent's host process does with git in a project: status for the system prompt, checkpoints before and
    after a turn (their diff, a file's bytes), a catalog commit, reads of commits, the file list for `@`."""
    assert snapshot(project).is_repo
    checkpoints = Checkpoints.open(project)
    assert checkpoints is not None
    before = checkpoints.snapshot()
    (project / "notes.txt").write_text("one\ntwo\nthree\n")
    after = checkpoints.snapshot()
    assert "three" in checkpoints.diff(before, after)
    entries = checkpoints.entries(after, ["notes.txt"])
    assert checkpoints.blob(entries["notes.txt"][1], "notes.txt") == b"one\ntwo\nthree\n"
    (project / ".agent" / "tools").mkdir(parents=True, exist_ok=True)
    store = CatalogGit(project)
    store.commit({".agent/tools/x.py": b"x = 1\n"}, "tuiagent: add x")
    trees = CommitTrees(project)
    head = git(project, "rev-parse", "HEAD").strip()
    assert "README.md" in trees.blobs(head)
    assert "two" in store.diff_files_since(head, ["*.txt"])  # drift: DEPENDS_ON files changed since a commit
    assert "notes.txt" in store.changed_files_since(head, ["*.txt"])
    assert store.show("notes.txt", head) == b"one\n" and store.history("notes.txt")
    assert git_project_files(project)
    store.close()


@pytest.mark.usefixtures("untrusted_config")
def test_plain_p_in_an_untrusted_downloaded_project_runs_none_of_its_git_config(
        tmp_path: Path, api: FakeMessagesAPI) -> None:
    project, canaries = hostile_repo(tmp_path)
    api.enqueue(reply(tool_use("read_file", {"path": "notes.txt"})), reply(text("a demo")))
    assert main(["--project", str(project), "-p", "what is this?"]) == 0
    assert ran(canaries) == []


@pytest.mark.usefixtures("untrusted_config")
def test_status_checkpoints_commits_and_reads_run_none_of_it(tmp_path: Path) -> None:
    project, canaries = hostile_repo(tmp_path)
    every_door_operation(project)
    assert ran(canaries) == []


def test_an_untrusted_catalog_commit_waits_for_trust_and_then_runs_the_persons_hooks(
        tmp_path: Path, untrusted_config: Path) -> None:
    project = init_repo(tmp_path / "project")
    canaries = tmp_path / "canaries"
    canaries.mkdir()
    hook = project / ".git" / "hooks" / "pre-commit"
    hook.write_text(f"#!/bin/sh\ntouch {canaries}/pre-commit\n")
    hook.chmod(0o755)
    (project / ".agent" / "tools").mkdir(parents=True)
    (project / ".agent" / "tools" / "x.py").write_bytes(b"x = 1\n")
    store = CatalogGit(project)
    waited = store.commit({".agent/tools/x.py": b"x = 1\n"}, "tuiagent: add x")
    assert not waited.committed and "trust" in (waited.deferred_reason or "") and ran(canaries) == []
    grant(Project.at(project))
    done = store.catch_up()
    assert done.committed and ran(canaries) == ["pre-commit"]
    (canaries / "pre-commit").unlink()
    git(project, "config", "filter.late.clean", f"touch {canaries}/late; cat")  # changed after trust
    status = check(Project.at(project))
    assert status.state == "changed" and any("filter.late.clean" in line for line in status.changed)
    (project / ".agent" / "tools" / "y.py").write_bytes(b"y = 1\n")
    again = store.commit({".agent/tools/y.py": b"y = 1\n"}, "tuiagent: add y")
    assert not again.committed and ran(canaries) == []
    store.close()


@pytest.mark.usefixtures("untrusted_config")
def test_trust_show_lists_the_command_running_config_with_its_files(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project, canaries = hostile_repo(tmp_path, ["fsmonitor", "clean", "textconv", "hooks"])
    assert main(["--project", str(project), "trust", "--show"]) == 0
    out = capsys.readouterr().out
    section = out.split("Git configuration that runs commands", 1)[1]
    assert "core.fsmonitor = touch" in section and "(from .git/config)" in section
    assert "filter.evil.clean" in section and "diff.evil.textconv" in section
    assert "filter.inc.clean" in section and "(from evil.cfg)" in section  # the included project file
    assert "git hook .git/hooks/pre-commit" in section
    assert ran(canaries) == []


@pytest.mark.usefixtures("untrusted_config")
def test_a_nested_repository_planted_in_the_work_tree_is_left_out_and_never_run(tmp_path: Path) -> None:
    project = init_repo(tmp_path / "project")
    canaries = tmp_path / "canaries"
    canaries.mkdir()
    checkpoints = Checkpoints.open(project)
    assert checkpoints is not None
    first = checkpoints.snapshot()
    nested = init_repo(project / "sub")
    git(nested, "config", "core.fsmonitor", f"touch {canaries}/fsmonitor; false")
    git(nested, "config", "filter.z.clean", f"touch {canaries}/clean; cat")
    (nested / ".gitattributes").write_text("* filter=z\n")
    (nested / "README.md").write_text("changed in the nested repository\n")
    empty = project / "plain" / "deep"
    empty.mkdir(parents=True)
    git(empty, "init", "-q")  # a repository without a commit: `git add` of it would fail the whole checkpoint
    (project / "app.py").write_text("print('changed')\n")
    second = checkpoints.snapshot()
    third = checkpoints.snapshot()
    assert snapshot(project).is_repo
    assert ran(canaries) == []
    assert checkpoints.changed_paths(first, third) == ["app.py"]
    assert second == third and "sub" not in checkpoints.entries(third, ["sub", "plain/deep"])


@pytest.mark.parametrize("layout", ["malformed config", ".git is a garbage file", "gitdir inside the project",
                                    "core.worktree elsewhere"])
def test_a_broken_repository_is_one_clear_line_and_nothing_runs(tmp_path: Path, layout: str,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    project = init_repo(tmp_path / "project")
    if layout == "malformed config":
        with open(project / ".git" / "config", "a") as config:
            config.write("[core\n\tfsmonitor = touch /tmp/never\n")
    elif layout == ".git is a garbage file":
        os.rename(project / ".git", tmp_path / "aside")
        (project / ".git").write_text("not a gitfile\n")
    elif layout == "core.worktree elsewhere":
        (tmp_path / "home").mkdir()
        git(project, "config", "core.worktree", str(tmp_path / "home"))
    else:
        os.rename(project / ".git", project / "inner")
        (project / ".git").write_text("gitdir: inner\n")
    before = sorted(str(p.relative_to(project)) for p in project.rglob("*"))
    with pytest.raises(ProjectRootError) as raised:
        locate(project)
    message = str(raised.value)
    assert "\n" not in message and str(project) in message
    assert main(["--project", str(project), "tools", "list"]) != 0
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert any(words in err for words in ("bad config", "gitfile", "inside the work tree", "core.worktree"))
    assert sorted(str(p.relative_to(project)) for p in project.rglob("*")) == before
    assert Checkpoints.open(project) is None and not CatalogGit(project).status().has_repo


def test_nothing_in_versioning_but_the_door_opens_a_repository_or_starts_git() -> None:
    door = {"gitdoor.py", "gitconfigscan.py"}
    offenders = []
    for path in sorted(VERSIONING.glob("*.py")):
        if path.name in door:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            call = node.func if isinstance(node, ast.Call) else None
            name = ast.unparse(call) if call is not None else ""
            starts_git = name.startswith("subprocess.") and "'git'" in ast.unparse(node)
            if name in ("git.Repo", "git.Git", "git.Repo.init") or starts_git:
                offenders.append(f"{path.name}: {ast.unparse(node)[:80]}")
    assert offenders == []


@pytest.mark.usefixtures("untrusted_config")
def test_every_cli_verb_in_an_untrusted_downloaded_project_runs_none_of_it(tmp_path: Path,
                                                                           capsys: pytest.CaptureFixture[str]) -> None:
    project, canaries = hostile_repo(tmp_path)
    for verb in (["tools", "list"], ["tools", "history", "x"], ["recipes", "list"], ["config"], ["sandbox", "status"],
                 ["mcp", "list"], ["trust", "--show"], ["tools", "commit"], ["tools", "run", "x"]):
        main(["--project", str(project), *verb])
    for verb in (["mcp", "serve"], ["watch"]):
        entry = "import sys; from tui_agent.cli import main; sys.exit(main(sys.argv[1:]))"
        with subprocess.Popen([sys.executable, "-c", entry, "--project", str(project), *verb], stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) as child:
            try:
                _out, err = child.communicate(timeout=20)
            except subprocess.TimeoutExpired:
                child.send_signal(signal.SIGINT)
                _out, err = child.communicate(timeout=20)
            assert b"Traceback" not in err and b"No module" not in err, err
    capsys.readouterr()
    assert ran(canaries) == []


def test_a_linked_worktree_and_a_submodule_are_still_projects(tmp_path: Path) -> None:
    """Their git dirs are not named `.git` (worktrees/<name>, modules/<name> of the main repository): not refused as
    another checkout's, and their common dir is outside their work tree."""
    main_repo = init_repo(tmp_path / "main")
    (main_repo / "a.txt").write_text("a\n")
    git(main_repo, "add", "-A")
    git(main_repo, "commit", "-qm", "a")
    linked = tmp_path / "linked"
    git(main_repo, "worktree", "add", "-q", "-b", "side", str(linked))
    library = init_repo(tmp_path / "library")
    (library / "lib.txt").write_text("lib\n")
    git(library, "add", "-A")
    git(library, "commit", "-qm", "lib")
    git(main_repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(library), "lib")
    for project in (linked, main_repo / "lib", main_repo):
        assert locate(project).root == project and locate(project).in_repository
        assert Checkpoints.open(project) is not None
