"""Broken state is rebuilt, not fatal: a corrupt state.db, a deleted cache, a read-only project, a full disk."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli_in_process import run_in_process
from tests.gitrepo import init_repo
from tests.mounts import fill, needs_mount, read_only, tmpfs
from tui_agent.cli import main

TOOL = '''def add(x: int, y: int = 2) -> int:
    """Add two numbers.

    Args:
        x: the first
        y: the second
    """
    return x + y
'''


def tools(repo: Path, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["--project", str(repo), "tools", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def with_tool(repo: Path) -> Path:
    (repo / ".agent" / "tools").mkdir(parents=True, exist_ok=True)
    path = repo / ".agent" / "tools" / "add.py"
    path.write_text(TOOL, encoding="utf-8")
    return path


def test_a_file_that_is_not_a_database_is_moved_aside_and_rebuilt(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with_tool(repo)
    assert tools(repo, capsys, "run", "add", "--arg", "x=1")[0] == 0
    state = repo / ".agent" / "state.db"
    for extra in state.parent.glob("state.db-*"):
        extra.unlink()
    state.write_bytes(b"this is not sqlite at all " * 100)
    code, out, err = tools(repo, capsys, "list", "--json")
    assert code == 0 and json.loads(out)[0]["name"] == "add"
    [notice] = [line for line in err.splitlines() if "state.db" in line]
    assert "was damaged (file is not a database); moved aside to .agent/state.db-corrupt-" in notice and "rebuilt" in notice
    [moved] = list(state.parent.glob("state.db-corrupt-*"))
    assert moved.read_bytes().startswith(b"this is not sqlite")
    assert tools(repo, capsys, "run", "add", "--arg", "x=2")[0] == 0
    code, out, err = tools(repo, capsys, "list", "--json")
    assert json.loads(out)[0]["calls"] == 1 and "state.db" not in err, "rebuilt: counting again, no second notice"
    assert "state.db-corrupt" not in subprocess.run(["git", "status", "--porcelain"], cwd=repo, text=True,
                                                    capture_output=True).stdout, "the moved file is git-ignored"


def test_a_malformed_schema_is_moved_aside_and_rebuilt(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with_tool(repo)
    assert tools(repo, capsys, "list")[0] == 0
    state = repo / ".agent" / "state.db"
    db = sqlite3.connect(state)
    db.execute("PRAGMA writable_schema = ON")
    db.execute("UPDATE sqlite_master SET sql = 'CREATE TABLE tool_runs(' WHERE name = 'tool_runs'")
    db.commit()
    db.close()
    code, out, err = tools(repo, capsys, "run", "add", "--arg", "x=3")
    assert (code, out.strip()) == (0, "5")
    assert "malformed database schema" in err and "moved aside" in err and len(err.strip().splitlines()) == 1


def test_a_deleted_cache_folder_is_rebuilt(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with_tool(repo)
    assert tools(repo, capsys, "run", "add", "--arg", "x=1")[1].strip() == "3"
    cache = repo / ".agent" / "cache"
    subprocess.run(["rm", "-rf", str(cache)], check=True)
    code, out, err = tools(repo, capsys, "run", "add", "--arg", "x=4")
    assert (code, out.strip(), err) == (0, "6", "")
    assert cache.is_dir()
    assert tools(repo, capsys, "list", "--json")[0] == 0


def cli(project: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    """The real CLI, in-process (an exception escaping it fails the test, as a traceback would)."""
    return run_in_process("--project", str(project), *argv)


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(path.relative_to(folder)): path.read_bytes() for path in sorted(folder.rglob("*"))
            if path.is_file() and ".git" not in path.parts}


@needs_mount
def test_a_read_only_project_still_lists_shows_diffs_and_runs_and_says_why_it_cannot_write(repo: Path,
                                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    tool = with_tool(repo)
    assert tools(repo, capsys, "list")[0] == 0
    tool.write_text(TOOL.replace("x + y", "y + x"), encoding="utf-8")
    assert tools(repo, capsys, "list")[0] == 0
    before = snapshot(repo)
    with read_only(repo):  # a read-only bind mount of the project onto itself until the block ends
        listed = cli(repo, "tools", "list", "--json")
        assert listed.returncode == 0 and json.loads(listed.stdout)[0]["name"] == "add", listed.stderr
        assert "state.db cannot be written (the folder .agent/ is read-only" in listed.stderr
        assert "Traceback" not in listed.stderr and len(listed.stderr.strip().splitlines()) == 1
        shown = cli(repo, "tools", "show", "add")
        assert shown.returncode == 0 and "def add" in shown.stdout
        diffed = cli(repo, "tools", "diff", "add")
        assert diffed.returncode == 0 and "+    return y + x" in diffed.stdout
        history = cli(repo, "tools", "history", "add", "--json")
        assert history.returncode == 0 and len(json.loads(history.stdout)) == 2
        ran = cli(repo, "tools", "run", "add", "--arg", "x=5")
        assert ran.returncode == 0 and ran.stdout.strip() == "7", ran.stderr
        assert "audit log .agent/runs/ cannot be written (Read-only file system)" in ran.stderr
        pruned = cli(repo, "tools", "prune", "add", "--json")
        failure = json.loads(pruned.stdout)
        assert pruned.returncode == 1 and "Read-only file system" in failure["error"] and "Traceback" not in pruned.stderr
    assert snapshot(repo) == before


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 3 MB tmpfs, mounted for this test and removed after it."""
    with tmpfs(tmp_path, "3m") as mount_point:
        yield mount_point


def run_cli(project: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tui_agent.cli", "--project", str(project), *argv], capture_output=True,
                          text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)})


@needs_mount
@pytest.mark.timeout(900)
def test_a_full_disk_at_any_step_gives_a_message_and_leaves_nothing_half_written(small_disk: Path,
                                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """The commands run in-process (an exception escaping `main` fails the test as a traceback would); one runs as a
    real process on the full disk, so that the interpreter's own start and exit there are covered too."""
    repo = init_repo(small_disk / "project")
    tool = with_tool(repo)
    assert tools(repo, capsys, "list")[0] == 0
    tool.write_text(TOOL.replace("x + y", "y + x"), encoding="utf-8")
    assert tools(repo, capsys, "list")[0] == 0
    user_files = {path: path.read_bytes() for path in repo.iterdir() if path.is_file()}
    versions = {TOOL.encode(), TOOL.replace("x + y", "y + x").encode()}
    fill(small_disk, 0)
    real_process = run_cli(repo, "tools", "run", "add", "--arg", "x=1")
    assert "Traceback" not in real_process.stderr, real_process.stderr
    assert real_process.returncode == 0 or "No space left" in real_process.stderr or "disk is full" in real_process.stderr
    for leave in (0, 16384, 65536):  # full at startup, at the git commit, at the state/audit writes
        fill(small_disk, leave)
        for argv in (["list", "--json"], ["run", "add", "--arg", "x=1"], ["prune", "add"], ["restore", "add"]):
            code, out, err = tools(repo, capsys, *argv)
            assert "Traceback" not in err, (leave, argv, err)
            if code != 0:
                assert err.strip(), (leave, argv)
                assert any(word in err for word in ("disk is full", "No space left", "Out of diskspace",
                                                    "nothing to restore", "no earlier version", "no tool named")), \
                    (leave, argv, out, err)
            if tool.exists():
                assert tool.read_bytes() in versions, "a tool file is one whole version"
            leftovers = [path.name for path in tool.parent.iterdir() if path.name.endswith(".tmp")]
            assert leftovers == [], (leave, argv, leftovers)
        (small_disk / "filler").unlink()
        fsck = subprocess.run(["git", "fsck", "--no-dangling"], cwd=repo, capture_output=True, text=True)
        assert fsck.returncode == 0, fsck.stdout + fsck.stderr
        assert {path: path.read_bytes() for path in user_files} == user_files
    assert tools(repo, capsys, "list")[0] == 0
    if not tool.exists():
        assert tools(repo, capsys, "restore", "add")[0] == 0
    assert tools(repo, capsys, "run", "add", "--arg", "x=1")[1].strip() == "3"
