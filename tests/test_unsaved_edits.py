"""Never undo what tuiagent did not make, through the commands a person runs: prune over staged edits, restore over
an uncommitted file of the same name, recipe revert and prune over a hand edit; and every store entry point (the
TUI's `/restore NAME` and catalog actions call them directly) refuses a path as a name."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.cli_in_process import run_in_process
from tests.gitrepo import git
from tests.test_nothing_lost import DOUBLE, DOUBLE_V2, RECIPE
from tui_agent.core.catalog.api import Catalog
from tui_agent.core.catalog.errors import PipelineError
from tui_agent.core.project import Project
from tui_agent.core.recipes.api import open_recipes
from tui_agent.core.sandbox import Sandbox

TOOL = ".agent/tools/double.py"
RECIPE_PATH = ".agent/recipes/hello.toml"


def tuiagent(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The command a person runs, in-process (the process boundary is not the subject here)."""
    return run_in_process("--project", str(repo), *args)


def committed(repo: Path, path: str, text: str) -> None:
    (repo / path).parent.mkdir(parents=True, exist_ok=True)
    (repo / path).write_text(text)
    done = tuiagent(repo, "tools" if path.startswith(".agent/tools") else "recipes", "list")
    assert done.returncode == 0, done.stderr
    assert git(repo, "show", f"HEAD:{path}") == text


def state(repo: Path) -> tuple[str, str, str]:
    return git(repo, "rev-parse", "HEAD"), git(repo, "ls-files", "-s"), git(repo, "status", "--porcelain")


def test_prune_refuses_staged_edits_naming_the_file(repo: Path) -> None:
    committed(repo, TOOL, DOUBLE)
    mine = DOUBLE + "\ndef half(:\n"
    (repo / TOOL).write_text(mine)
    git(repo, "add", TOOL)
    before = state(repo)
    done = tuiagent(repo, "tools", "prune", "double")
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert f"{TOOL} has staged changes that are not committed; prune would discard them" in done.stderr
    assert (repo / TOOL).read_text() == mine and state(repo) == before


def test_restore_never_overwrites_an_uncommitted_file_of_that_name(repo: Path) -> None:
    committed(repo, TOOL, DOUBLE)
    assert tuiagent(repo, "tools", "prune", "double").returncode == 0 and not (repo / TOOL).exists()
    (repo / TOOL).write_text("# my own work, never committed\n")
    before = state(repo)
    done = tuiagent(repo, "tools", "restore", "double")
    assert done.returncode != 0 and "double exists; nothing to restore" in done.stderr
    assert (repo / TOOL).read_text() == "# my own work, never committed\n" and state(repo) == before


@pytest.mark.parametrize("action", ["revert", "prune"])
def test_recipe_revert_and_prune_refuse_a_hand_edit_naming_the_file(repo: Path, action: str) -> None:
    committed(repo, RECIPE_PATH, RECIPE)
    committed(repo, RECIPE_PATH, RECIPE.replace("say hi", "say hello"))
    mine = 'description = "half written\n'
    (repo / RECIPE_PATH).write_text(mine)
    before = state(repo)
    done = tuiagent(repo, "recipes", action, "hello")
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert f"{RECIPE_PATH} has edits that are not committed (made outside tuiagent); {action} would discard them" in done.stderr
    assert (repo / RECIPE_PATH).read_text() == mine and state(repo) == before


def failing_pre_commit_hook(repo: Path) -> Path:
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho 'lint says no' >&2\nexit 1\n")
    hook.chmod(0o755)
    return hook


def subjects(repo: Path) -> list[str]:
    return git(repo, "log", "--format=%s").splitlines()


@pytest.mark.parametrize("kind", ["recipes", "tools"])
def test_a_deferred_revert_stays_tuiagents_own_and_the_next_prune_goes_ahead(repo: Path, kind: str) -> None:
    """tuiagent's own revert whose commit was deferred is not the person's unsaved edit: the next command's start
    catches it up under its own message (never relabelled "edited outside tuiagent"), and prune is not refused."""
    path, name, first = (RECIPE_PATH, "hello", RECIPE) if kind == "recipes" else (TOOL, "double", DOUBLE)
    committed(repo, path, first)
    committed(repo, path, first.replace("say hi", "say hello") if kind == "recipes" else DOUBLE_V2)
    hook, setup = failing_pre_commit_hook(repo), len(subjects(repo))
    done = tuiagent(repo, kind, "revert", name)
    assert done.returncode == 0 and "commit deferred" in done.stdout + done.stderr, done.stdout + done.stderr
    assert (repo / path).read_text() == first
    done = tuiagent(repo, kind, "prune", name)
    assert "not committed (made outside tuiagent)" not in done.stderr and "Traceback" not in done.stderr
    assert done.returncode == 0 and "commit deferred" in done.stdout + done.stderr, done.stdout + done.stderr
    assert not (repo / path).exists() and len(subjects(repo)) == setup
    hook.unlink()
    assert tuiagent(repo, kind, "list").returncode == 0
    [pruned] = subjects(repo)[:-setup]
    assert pruned.startswith(f"tuiagent: prune {kind.removesuffix('s')} {name}") and "outside" not in pruned, pruned
    assert path not in git(repo, "ls-files") and git(repo, "status", "--porcelain") == ""


@pytest.mark.parametrize("kind", ["recipes", "tools"])
def test_a_deferred_revert_is_committed_under_its_own_message(repo: Path, kind: str) -> None:
    path, name, first = (RECIPE_PATH, "hello", RECIPE) if kind == "recipes" else (TOOL, "double", DOUBLE)
    committed(repo, path, first)
    committed(repo, path, first.replace("say hi", "say hello") if kind == "recipes" else DOUBLE_V2)
    hook = failing_pre_commit_hook(repo)
    assert "commit deferred" in tuiagent(repo, kind, "revert", name).stdout
    hook.unlink()
    assert tuiagent(repo, kind, "list").returncode == 0
    assert subjects(repo)[0].startswith(f"tuiagent: revert {kind.removesuffix('s')} {name} to "), subjects(repo)[:3]
    assert git(repo, "show", f"HEAD:{path}") == first and git(repo, "status", "--porcelain") == ""


async def test_every_store_entry_point_refuses_a_path_as_a_name(repo: Path, tmp_path: Path) -> None:
    victim = tmp_path / "o" / "lib.py"
    victim.parent.mkdir()
    victim.write_text("precious\n")
    (tmp_path / "o" / "lib.toml").write_text("precious\n")
    before = {p.name: os.stat(p) for p in victim.parent.iterdir()}
    project = Project.at(repo)
    box = await Sandbox.start(project, warm_workers=0)
    catalog = await Catalog.open(project, box)
    engine = await open_recipes(project, catalog)
    try:
        for kind, store in (("tool", catalog), ("recipe", engine)):
            for action in (store.prune, store.revert, store.restore):
                with pytest.raises(PipelineError, match=f"is not a {kind} name but a path") as raised:
                    await action("../../../o/lib")
                assert raised.value.stage == "name"
    finally:
        await engine.aclose()
        await catalog.aclose()
        await box.aclose()
    after = {p.name: os.stat(p) for p in victim.parent.iterdir()}
    assert {n: (s.st_ino, s.st_mtime_ns) for n, s in after.items()} == {n: (s.st_ino, s.st_mtime_ns) for n, s in before.items()}
