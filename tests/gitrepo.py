"""Helpers for tests: real git repositories in temporary folders, and a fingerprint of the user's work."""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

_templates: dict[str, Path] = {}  # by umask: the one-commit repository init_repo copies, built once per process


def git(repo: Path, *args: str, check: bool = True, env: dict[str, str] | None = None) -> str:
    """Run the real git CLI in `repo` and return its stdout."""
    result = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=False, env=env)
    if check and result.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed: {result.stderr}")
    return result.stdout


def init_repo(path: Path, *, commit: bool = True) -> Path:
    """Create a git repo with a user identity and, unless `commit` is False, one commit of README.md.

    The committed repository is a copy of one built once per process (git init and a commit are six git runs),
    its files written now and its index refreshed, as a freshly built one would be."""
    if not commit or (path / ".git").exists():
        return build_repo(path, commit=commit)
    umask = _umask()
    if umask not in _templates:
        folder = tempfile.mkdtemp(prefix="tests-git-template-")
        atexit.register(shutil.rmtree, folder, True)
        # Not shaped by the environment of the test that happens to need it first (GIT_DIR, GIT_CONFIG_GLOBAL...)
        clean = {name: value for name, value in os.environ.items() if not name.startswith("GIT_")}
        _templates[umask] = build_repo(Path(folder) / "project", env=clean)
    shutil.copytree(_templates[umask], path, symlinks=True, copy_function=shutil.copy, dirs_exist_ok=True)
    git(path, "update-index", "-q", "--refresh")
    return path


def _umask() -> str:
    return next(line.split()[1] for line in Path("/proc/self/status").read_text().splitlines() if line.startswith("Umask:"))


def build_repo(path: Path, *, commit: bool = True, env: dict[str, str] | None = None) -> Path:
    """init_repo's repository made with git from scratch."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main", env=env)
    git(path, "config", "user.email", "dev@example.com", env=env)
    git(path, "config", "user.name", "Dev", env=env)
    git(path, "config", "commit.gpgsign", "false", env=env)
    if commit:
        (path / "README.md").write_text("# demo project\n")
        (path / "app.py").write_text("print('hello')\n")
        git(path, "add", "README.md", "app.py", env=env)
        git(path, "commit", "-q", "-m", "initial", env=env)
    return path


def make_user_changes(repo: Path) -> None:
    """Leave a staged change, an unstaged change and an untracked file, as a person mid-work would."""
    (repo / "README.md").write_text("# demo project\nstaged line\n")
    git(repo, "add", "README.md")
    (repo / "README.md").write_text("# demo project\nstaged line\nunstaged line\n")
    (repo / "app.py").write_text("print('hello, unstaged')\n")
    (repo / "notes.txt").write_text("untracked notes\n")


def user_state(repo: Path) -> dict[str, str]:
    """Fingerprint of everything outside `.agent/`: work tree bytes, the staged blobs, and git status."""
    state: dict[str, str] = {}
    for file in sorted(repo.rglob("*")):
        rel = file.relative_to(repo).as_posix()
        if file.is_file() and not rel.startswith((".git/", ".agent/")):
            state[f"worktree:{rel}"] = hashlib.sha256(file.read_bytes()).hexdigest()
    staged = git(repo, "ls-files", "--stage")
    state["index"] = "\n".join(line for line in staged.splitlines() if "\t.agent/" not in line)
    status = git(repo, "status", "--porcelain", "--untracked-files=all")
    state["status"] = "\n".join(line for line in status.splitlines() if ".agent/" not in line)
    return state


def add_hooks_running_a_script(repo: Path, script_body: str, hooks: tuple[str, ...] = ("pre-commit",)) -> None:
    """The user's git hooks run a committed project script, ./scripts/check.sh, as lint setups do."""
    script = repo / "scripts" / "check.sh"
    script.parent.mkdir(exist_ok=True)
    script.write_text(script_body)
    script.chmod(0o755)
    git(repo, "add", "scripts/check.sh")
    git(repo, "commit", "-q", "-m", "lint script")
    for name in hooks:
        hook = repo / ".git" / "hooks" / name
        hook.write_text("#!/bin/sh\nexec ./scripts/check.sh\n")
        hook.chmod(0o755)


def with_ignored_venv(repo: Path, name: str, script: str) -> Path:
    """A real virtualenv in `repo/.venv`, git-ignored (with build/ and __pycache__/), and the script `name` committed;
    the virtualenv's site-packages folder."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(repo / ".venv")], check=True)
    (repo / ".gitignore").write_text(".venv/\nbuild/\n__pycache__/\n")
    (repo / name).write_text(script)
    git(repo, "add", ".gitignore", name)
    git(repo, "commit", "-q", "-m", "project")
    return next((repo / ".venv" / "lib").glob("python3*/site-packages"))
