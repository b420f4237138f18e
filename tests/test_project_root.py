"""Every command finds the project root from a subfolder, creates nothing outside a repository, and names the problem with a symlinked .agent, an ignored .agent or a repository git refuses."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.cli_in_process import run_in_process
from tests.fake_messages_api import FakeMessagesAPI, reply, text

COMMANDS = [["tools", "list"], ["tools", "history", "nothing"], ["recipes", "list"], ["sandbox", "status"], ["-p", "hi"]]


def tuiagent(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The CLI's `main` in this process, run from `cwd` with `env` added (as a shell starts it there): the subject is
    where it finds the project, not its process. The working folder and the environment are put back after."""
    added = env or {}
    before_cwd, before_env = os.getcwd(), {name: os.environ.get(name) for name in added}
    os.environ.update(added)
    os.chdir(cwd)
    try:
        return run_in_process(*args)
    finally:
        os.chdir(before_cwd)
        for name, value in before_env.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@pytest.mark.parametrize("command", COMMANDS, ids=[" ".join(c) for c in COMMANDS])
def test_run_from_a_subfolder_every_command_uses_the_repository_root(repo: Path, command: list[str]) -> None:
    sub = repo / "src" / "deep"
    sub.mkdir(parents=True)
    with FakeMessagesAPI() as api:
        api.enqueue(reply(text("hello")))
        done = tuiagent(sub, *command, env={"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": api.base_url})
    assert "Traceback" not in done.stderr, done.stderr
    assert not (repo / "src" / ".agent").exists() and not (sub / ".agent").exists()
    if command != ["sandbox", "status"]:
        assert (repo / ".agent" / "tools").is_dir()


def test_the_nearest_agent_folder_wins_inside_a_repository(repo: Path) -> None:
    package = repo / "packages" / "web"
    (package / ".agent").mkdir(parents=True)
    (package / "lib").mkdir()
    done = tuiagent(package / "lib", "tools", "list")
    assert done.returncode == 0, done.stderr
    assert (package / ".agent" / "tools").is_dir() and not (repo / ".agent").exists()


@pytest.mark.parametrize("command", COMMANDS, ids=[" ".join(c) for c in COMMANDS])
def test_outside_any_repository_no_command_creates_agent_silently(tmp_path: Path, command: list[str]) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    done = tuiagent(folder, *command, env={"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"})
    assert not (folder / ".agent").exists() and list(folder.iterdir()) == []
    if command == ["-p", "hi"]:  # a headless prompt goes on without git, as the TUI's `c` (the model is unreachable here)
        assert "not inside a git repository" not in done.stderr and "127.0.0.1:9" in done.stderr
    elif command != ["sandbox", "status"]:
        assert done.returncode == 2 and "is not inside a git repository and has no .agent/ folder" in done.stderr
        assert "--init-git" in done.stderr
    else:
        assert done.returncode == 0 and ".agent" in done.stdout  # the protected paths are listed


def test_init_git_outside_a_repository_creates_both(tmp_path: Path) -> None:
    done = tuiagent(tmp_path, "tools", "--init-git", "list")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / ".git").is_dir() and (tmp_path / ".agent" / "tools").is_dir()


@pytest.mark.parametrize("link", [".agent", ".agent/tools"])
def test_a_symlinked_agent_folder_gets_a_precise_message(repo: Path, tmp_path: Path, link: str) -> None:
    target = tmp_path / "elsewhere"
    target.mkdir()
    (repo / ".agent").mkdir(exist_ok=True)
    (repo / link).rmdir() if (repo / link).is_dir() else None
    (repo / link).symlink_to(target)
    done = tuiagent(repo, "tools", "list")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"{repo / link} is a symlink (to {target})" in done.stderr and "Replace the link" in done.stderr
    assert list(target.iterdir()) == []


def test_agent_listed_in_gitignore_gets_a_precise_warning(repo: Path) -> None:
    (repo / ".gitignore").write_text("*.log\n.agent/\n")
    done = tuiagent(repo, "tools", "list")
    assert done.returncode == 0, done.stderr
    assert ".agent/ is ignored by git (.gitignore:2:.agent/)" in done.stderr and "!.agent/" in done.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="making a repository owned by another user needs root")
def test_a_repository_git_refuses_as_dubious_ownership_gets_a_precise_message(repo: Path) -> None:
    subprocess.run(["chown", "-R", "65534:65534", str(repo)], check=True)
    try:
        done = tuiagent(repo, "tools", "list", env={"HOME": str(repo.parent), "GIT_CONFIG_GLOBAL": "/dev/null"})
    finally:
        subprocess.run(["chown", "-R", f"{os.getuid()}:{os.getgid()}", str(repo)], check=True)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "dubious ownership" in done.stderr and "safe.directory" in done.stderr
    assert not (repo / ".agent").exists()


def test_git_not_answering_where_the_project_is_is_an_error_not_no_repository(repo: Path, tmp_path: Path) -> None:
    """A config include that is a fifo nobody writes: git blocks opening it, as on a stuck filesystem."""
    fifo = tmp_path / "include.fifo"
    os.mkfifo(fifo)
    subprocess.run(["git", "config", "include.path", str(fifo)], cwd=repo, check=True)
    done = tuiagent(repo, "tools", "list", env={"TUIAGENT_GIT_TIMEOUT_S": "1"})
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"`git rev-parse --show-toplevel --absolute-git-dir` in {repo} did not answer within 1 s" in done.stderr, done.stderr
    assert "TUIAGENT_GIT_TIMEOUT_S=SECONDS" in done.stderr and "not inside a git repository" not in done.stderr
    assert not (repo / ".agent").exists()


def test_git_not_answering_whether_agent_is_ignored_is_a_warning(repo: Path, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """`rev-parse` answers; `check-ignore` blocks on the excludes file (a fifo) and is cut at the bound."""
    from tui_agent.core.rootfind import locate

    fifo = tmp_path / "excludes.fifo"
    os.mkfifo(fifo)
    subprocess.run(["git", "config", "core.excludesFile", str(fifo)], cwd=repo, check=True)
    monkeypatch.setenv("TUIAGENT_GIT_TIMEOUT_S", "0.5")
    located = locate(repo)
    assert located.root == repo and located.in_repository
    assert located.warnings == [f"`git check-ignore -v --no-index .agent/tools/x.py` in {repo} did not answer within "
                                "0.5 s, so whether .agent/ is ignored by git is not known (TUIAGENT_GIT_TIMEOUT_S="
                                "SECONDS gives git longer)."]


def test_a_repository_whose_path_has_a_newline_is_found(tmp_path: Path) -> None:
    """rev-parse answers the work tree and the git folder in one run, one a line; a newline in the path still works."""
    from tests.gitrepo import init_repo
    from tui_agent.core.rootfind import locate

    repo = init_repo(tmp_path / "two\nlines")
    (repo / "src").mkdir()
    located = locate(repo / "src")
    assert located.root == repo and located.in_repository
