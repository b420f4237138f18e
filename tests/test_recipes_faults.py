"""A read-only project and a full disk for `tuiagent recipes …` and the TUI: reading commands work and say what cannot be
recorded, writing ones explain why they cannot write, and nothing is left half-written (real tmpfs and bind mounts)."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.gitrepo import init_repo
from tests.cli_in_process import run_in_process
from tests.mounts import fill, free, needs_mount, read_only, tmpfs, use_up_inodes
from tests.ui_support import SIZE, answer_confirm, make_app, notifications, ready, row_names, wait_until
from tui_agent.cli import main
from tui_agent.ui.screens.confirm import ConfirmScreen
from tui_agent.ui.screens.source import SourceScreen

pytestmark = needs_mount

TOOL = '''def double(x: int) -> int:
    """Double a number.

    Args:
        x: the number
    """
    return 2 * x
'''
RECIPE = 'description = "double a number"\n[trigger]\non = "command"\n[action]\ntool = "double"\nargs = {x = 2}\n'
RECIPE_V2 = RECIPE.replace("x = 2", "x = 3")


@pytest.fixture(autouse=True)
def no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def tuiagent(repo: Path, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["--project", str(repo), *argv])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err, (argv, captured.err)
    return code, captured.out, captured.err


def cli_here(repo: Path, *argv: str) -> tuple[int, str]:
    """The real CLI's `main` in this process, from where no event loop runs (a sync fixture's code)."""
    done = run_in_process("--project", str(repo), *argv)
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, done.stdout


def with_recipe_in_two_versions(repo: Path, cli: Callable[..., tuple[Any, ...]]) -> Path:
    """The tool `double` and the recipe `lines`, committed twice (x = 2, then x = 3)."""
    (repo / ".agent" / "tools").mkdir(parents=True, exist_ok=True)
    (repo / ".agent" / "recipes").mkdir(parents=True, exist_ok=True)
    (repo / ".agent" / "tools" / "double.py").write_text(TOOL)
    recipe = repo / ".agent" / "recipes" / "lines.toml"
    recipe.write_text(RECIPE)
    assert cli(repo, "recipes", "list")[0] == 0
    recipe.write_text(RECIPE_V2)
    assert cli(repo, "recipes", "list")[0] == 0
    assert len(json.loads(cli(repo, "recipes", "history", "lines", "--json")[1])) == 2
    return recipe


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(path.relative_to(folder)): path.read_bytes() for path in sorted(folder.rglob("*"))
            if path.is_file() and ".git" not in path.parts}


CACHES = (".agent/state.db", ".agent/cache/", ".agent/runs/", ".agent/sessions/")


def files_that_matter(folder: Path) -> dict[str, bytes]:
    """The snapshot without the caches and logs a running app may still write to (in the page a full disk has left)."""
    return {path: data for path, data in snapshot(folder).items() if not path.startswith(CACHES)}


@pytest.mark.timeout(600)
def test_recipes_commands_on_a_read_only_project(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with_recipe_in_two_versions(repo, lambda repo, *argv: tuiagent(repo, capsys, *argv))
    before = snapshot(repo)
    with read_only(repo):
        code, out, err = tuiagent(repo, capsys, "recipes", "list", "--json")
        assert code == 0 and json.loads(out)[0]["name"] == "lines"
        assert err.splitlines() == ["tuiagent: .agent/state.db cannot be written (the folder .agent/ is read-only: unable to "
                                    "open database file); usage counts and validations are kept in memory for this session only"]
        code, out, _ = tuiagent(repo, capsys, "recipes", "show", "lines")
        assert code == 0 and "args = {x = 3}" in out and "action: tool double" in out
        code, out, _ = tuiagent(repo, capsys, "recipes", "diff", "lines")
        assert code == 0 and "-args = {x = 2}" in out and "+args = {x = 3}" in out
        code, out, _ = tuiagent(repo, capsys, "recipes", "history", "lines", "--json")
        assert code == 0 and len(json.loads(out)) == 2
        code, out, err = tuiagent(repo, capsys, "recipes", "run", "lines")
        assert code == 0 and out.startswith("ok: recipe lines (tool double) double → 6"), err
        assert "tuiagent: the audit log .agent/runs/ cannot be written (Read-only file system); runs are not logged" in err
        for verb in ("prune", "revert"):
            code, out, err = tuiagent(repo, capsys, "recipes", verb, "lines", "--json")
            failure = json.loads(out)
            assert code == 1 and "Read-only file system" in failure["error"], (verb, failure)
            assert "not writable" in failure["error"], failure
            assert "Errno" not in failure["error"] and ".tmp" not in failure["error"], failure
        code, out, err = tuiagent(repo, capsys, "recipes", "revert", "lines")
        assert code == 1 and "cannot write .agent/recipes/lines.toml: Read-only file system; the project or its .agent/ " \
                              "folder is not writable: make it writable to change it (nothing was changed)" in out + err
    assert snapshot(repo) == before


def test_a_read_only_checkout_without_agent_folder_lists_and_runs(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A read-only clone nobody ran tuiagent in yet: nothing to list, but no failure either, and the sandbox runs."""
    (repo / "hello.py").write_text("print('hello from a read-only checkout')\n")
    with read_only(repo):
        code, out, err = tuiagent(repo, capsys, "tools", "list")
        assert (code, out.strip()) == (0, "no tools yet (.agent/tools/ is empty)"), err
        assert "state.db cannot be written" in err and len(err.strip().splitlines()) == 1
        code, out, _ = tuiagent(repo, capsys, "recipes", "list", "--json")
        assert (code, json.loads(out)) == (0, [])
        code, out, err = tuiagent(repo, capsys, "sandbox", "run", str(repo / "hello.py"))
        assert code == 0 and "hello from a read-only checkout" in out, err
    assert not (repo / ".agent").exists()


def first_lines(process: subprocess.Popen[str], count: int, timeout_s: float) -> list[str]:
    """The first `count` lines a process prints, or as many as came within `timeout_s`."""
    assert process.stdout is not None
    deadline, lines = time.monotonic() + timeout_s, []
    while len(lines) < count and time.monotonic() < deadline:
        if select.select([process.stdout], [], [], max(0.0, deadline - time.monotonic()))[0]:
            lines.append(process.stdout.readline())
    return lines


def test_watch_on_a_read_only_project_says_it_is_watching(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """No readiness probe can be written there; the watch is taken as live after a moment instead of never."""
    with_recipe_in_two_versions(repo, lambda repo, *argv: tuiagent(repo, capsys, *argv))
    with read_only(repo):
        watch = subprocess.Popen([sys.executable, "-m", "tui_agent.cli", "--project", str(repo), "watch"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)})
        try:
            lines = first_lines(watch, 2, timeout_s=60)
        finally:
            watch.send_signal(signal.SIGINT)
            rest, err = watch.communicate(timeout=60)
    assert lines[0].startswith("[warning] .agent/state.db cannot be written"), lines
    assert len(lines) == 2 and lines[1].startswith(f"[info] watching {repo}: 0 file_changed recipe(s)"), (lines, err)
    assert rest.strip().endswith("[info] stopped") and watch.returncode == 0 and "Traceback" not in err


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Path]:
    with tmpfs(tmp_path, "4m") as mount_point:
        yield mount_point


@pytest.fixture
def two_versions_on_disk(disk: Path) -> Path:
    """A project on `disk` with the tool `double` and the recipe `lines` in two versions, made by the CLI before the
    test's event loop runs: `recipes` starts a sandbox, whose signal handlers only the main thread may set."""
    repo = init_repo(disk / "project")
    with_recipe_in_two_versions(repo, cli_here)
    return repo


def test_a_catalog_that_cannot_open_on_a_full_disk_is_said_in_words(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """The catalog's first new file (its lock) cannot be made: the CLI names the file, the full disk and what to do,
    not `[Errno 28]` nor every note of the start."""
    from tui_agent.core.project import Project

    with tmpfs(tmp_path, "8m", inodes=2000) as disk:
        repo = init_repo(disk / "project")
        (repo / ".agent" / "tools").mkdir(parents=True)
        (repo / ".agent" / "tools" / "double.py").write_text(TOOL)
        (repo / ".agent" / "recipes").mkdir()
        (repo / ".agent" / "recipes" / "lines.toml").write_text(RECIPE)
        Project.at(repo).ensure_layout()  # its folders are there; no new file can be made in them
        use_up_inodes(disk)
        for verb in ("prune", "list"):
            code, _, err = tuiagent(repo, capsys, "recipes", verb, *(["lines"] if verb == "prune" else []))
            last = err.strip().splitlines()[-1]
            assert code == 1 and last.startswith("tuiagent: recipes are unavailable: the tool catalog could not open: "
                                                 ".agent/cache/"), err
            assert last.endswith(": No space left on device; the disk is full: free some space and try again"), err
            assert "Errno" not in err and "new or changed since" not in last
        assert (repo / ".agent" / "recipes" / "lines.toml").read_text() == RECIPE


def test_a_tool_prune_that_fails_when_no_new_file_can_be_made_leaves_the_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Out of inodes a hard link cannot be made either: the pruned file is moved aside (a rename), not deleted, so the
    failed commit puts it back (it used to be deleted for good, the error naming a temporary file)."""
    with tmpfs(tmp_path, "8m", inodes=2000) as disk:
        repo = init_repo(disk / "project")
        tool = repo / ".agent" / "tools" / "double.py"
        tool.parent.mkdir(parents=True)
        tool.write_text(TOOL)
        assert tuiagent(repo, capsys, "tools", "list")[0] == 0  # the catalog's own files are made
        use_up_inodes(disk)
        code, _, err = tuiagent(repo, capsys, "tools", "prune", "double")
        assert code == 1 and err.strip().splitlines()[-1] == (
            "tuiagent: commit: removing double failed; the file is as it was: No space left on device; the disk is "
            "full: free some space and try again"), err
        assert tool.read_text() == TOOL
        assert [path.name for path in tool.parent.iterdir() if path.name.endswith(".tmp")] == []


DISK_FULL_WORDS = ("disk is full", "No space left", "Out of diskspace", "nothing to restore", "no earlier version",
                   "no recipe named", "no history", "database or disk is full")


@pytest.mark.timeout(900)
def test_recipes_commands_on_a_full_disk_leave_nothing_half_written(disk: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = init_repo(disk / "project")
    recipe = with_recipe_in_two_versions(repo, lambda repo, *argv: tuiagent(repo, capsys, *argv))
    user_files = {path: path.read_bytes() for path in repo.iterdir() if path.is_file()}
    versions = {RECIPE.encode(), RECIPE_V2.encode()}
    for leave in (0, 16384, 65536):  # full at startup, at the git commit, at the state/audit writes
        fill(disk, leave)
        for argv in (["list", "--json"], ["run", "lines"], ["revert", "lines"], ["prune", "lines"], ["restore", "lines"]):
            code, out, err = tuiagent(repo, capsys, "recipes", *argv)
            if code != 0:
                assert any(words in out + err for words in DISK_FULL_WORDS), (leave, argv, out, err)
            if recipe.exists():
                assert recipe.read_bytes() in versions, "a recipe file is one whole version"
            leftovers = [path.name for path in recipe.parent.iterdir() if path.name.endswith(".tmp")]
            assert leftovers == [], (leave, argv, leftovers)
        free(disk)
        fsck = subprocess.run(["git", "fsck", "--no-dangling"], cwd=repo, capture_output=True, text=True)
        assert fsck.returncode == 0, fsck.stdout + fsck.stderr
        assert {path: path.read_bytes() for path in user_files} == user_files
    if not recipe.exists():
        assert tuiagent(repo, capsys, "recipes", "restore", "lines")[0] == 0
    code, out, _ = tuiagent(repo, capsys, "recipes", "run", "lines")
    assert code == 0 and out.startswith("ok: recipe lines (tool double)")


def notice_texts(app) -> list[str]:  # type: ignore[no-untyped-def]
    return [entry.text for entry in app.conversation.entries if entry.kind == "notice"]


async def test_the_tui_opens_a_read_only_project_shows_the_catalog_and_explains_why_it_cannot_write(
        disk: Path, two_versions_on_disk: Path) -> None:
    repo = two_versions_on_disk
    before = snapshot(repo)
    subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
    app = make_app(repo)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await wait_until(pilot, lambda: {"double", "lines"} <= set(row_names(app)), message="the catalog rows")
        assert any(".agent/state.db cannot be written (the folder .agent/ is read-only" in notice for notice in notice_texts(app))
        app.action_show_pane("catalog")
        assert app.catalog_pane.select("double")
        await pilot.pause()
        await pilot.press("v")
        await wait_until(pilot, lambda: isinstance(app.screen, SourceScreen), message="the source view")
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, SourceScreen), message="the source view to close")

        await pilot.press("d")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), message="the prune confirmation")
        await pilot.press("y")
        await wait_until(pilot, lambda: any(note.startswith("prune double:") for note in notifications(app)),
                         message="why the prune cannot write")
        [pruned] = [note for note in notifications(app) if note.startswith("prune double:")]
        assert pruned == "prune double: [commit] removing double failed; the file is as it was: Read-only file system; " \
                         "the project or its .agent/ folder is not writable: make it writable to change it", pruned

        assert app.catalog_pane.select("lines")
        await pilot.pause()
        await pilot.press("u")
        await answer_confirm(pilot)
        await wait_until(pilot, lambda: any(note.startswith("revert lines:") for note in notifications(app)),
                         message="why the revert cannot write")
        [reverted] = [note for note in notifications(app) if note.startswith("revert lines:")]
        assert "cannot write .agent/recipes/lines.toml: Read-only file system" in reverted and "make it writable" in reverted
        assert {"double", "lines"} <= set(row_names(app))
    assert snapshot(repo) == before


async def test_the_tui_on_a_full_disk_explains_and_leaves_nothing_half_written(disk: Path, two_versions_on_disk: Path) -> None:
    repo = two_versions_on_disk
    recipe = repo / ".agent" / "recipes" / "lines.toml"
    app = make_app(repo)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await wait_until(pilot, lambda: {"double", "lines"} <= set(row_names(app)), message="the catalog rows")
        before = files_that_matter(repo)
        fill(disk, 0)
        app.action_show_pane("catalog")
        assert app.catalog_pane.select("lines")
        await pilot.pause()
        await pilot.press("u")
        await answer_confirm(pilot)
        await wait_until(pilot, lambda: any(note.startswith("revert lines:") for note in notifications(app)), timeout=30,
                         message="why the revert cannot write")
        [reverted] = [note for note in notifications(app) if note.startswith("revert lines:")]
        # the file write or, when that still fits, the git commit is refused: either way the same words
        assert "No space left on device; the disk is full: free some space and try again" in reverted, reverted
        assert "Errno" not in reverted, reverted
        assert recipe.read_text() == RECIPE_V2 and not list(recipe.parent.glob("*.tmp"))
        assert files_that_matter(repo) == before
        free(disk)
        await pilot.press("u")
        await answer_confirm(pilot)
        await wait_until(pilot, lambda: recipe.read_text() == RECIPE, timeout=30, message="the revert once there is room")
        assert {"double", "lines"} <= set(row_names(app))
