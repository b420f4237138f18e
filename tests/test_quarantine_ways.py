"""The sweep after a writable run without an overlay (the rlimits tier, bubblewrap without one) never moves anything
through a symlink the run left: a symlink or file the run put on the way to a protected path (`tools` for the hooks
folder `tools/hooks`) is itself moved to `.agent/quarantine/`, never what it points to; the person's own symlink
there is left alone; a run killed before its sweep is swept the same way at the next start."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.gitrepo import git
from tui_agent.core.project import Project
from tui_agent.core.sandbox import Sandbox, SandboxPolicy, ShellCommand
from tui_agent.core.sandbox.protected import Guard

TIERS = ["bubblewrap", "rlimits"]
WRITABLE = SandboxPolicy(timeout_s=30, project_writable=True)
PLANT_HOOK = ("mkdir -p vendor/hooks && printf '#!/bin/sh\\ntouch {canary}\\n' > vendor/hooks/pre-commit && "
              "chmod +x vendor/hooks/pre-commit && ln -s vendor tools")


def hooked(repo: Path) -> Project:
    project = Project.at(repo)
    project.ensure_layout()
    git(repo, "config", "core.hooksPath", "tools/hooks")  # a folder absent before the run
    return project


async def run_unfenced(project: Project, tier: str, command: str) -> list[str]:
    """Run `command` writing the project directly (no overlay); the notes it got."""
    box = await Sandbox.start(project, tier=tier, warm_workers=0)
    try:
        box.runs.overlay_problem = "off for the test"  # bubblewrap without an overlay: the run is fenced and swept
        seen = len(box.notices)
        result = await box.run(ShellCommand(command, 30), WRITABLE)
        notes = box.notices[seen:]
    finally:
        await box.aclose()
    assert result.ok and result.value["exit_code"] == 0, result
    return notes


def quarantined(repo: Path, name: str) -> list[Path]:
    """`name` in each quarantine folder where it is (a symlink pointing nowhere too)."""
    folders = (repo / ".agent" / "quarantine").iterdir() if (repo / ".agent" / "quarantine").is_dir() else []
    return [folder / name for folder in folders if os.path.lexists(folder / name)]


@pytest.mark.parametrize("tier", TIERS)
async def test_a_symlink_the_run_left_on_the_way_to_the_hooks_folder_is_moved_itself(repo: Path, tmp_path: Path,
                                                                                     tier: str) -> None:
    project = hooked(repo)
    canary = tmp_path / "hook-ran"
    notes = await run_unfenced(project, tier, PLANT_HOOK.format(canary=canary))
    assert not os.path.lexists(repo / "tools"), notes
    links = quarantined(repo, "tools")
    assert len(links) == 1 and os.readlink(links[0]) == "vendor", notes
    assert [note for note in notes if note.startswith("agent code left a symlink at the protected path tools; moved "
                                                      f"to {links[0].relative_to(repo)}")], notes
    home = tmp_path / "home"
    home.mkdir()
    done = subprocess.run(["git", "-C", str(repo), "commit", "-q", "--allow-empty", "-m", "after the run"],
                          capture_output=True, text=True, check=False,
                          env={"PATH": os.environ["PATH"], "HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1"})
    assert done.returncode == 0, done.stderr
    assert not canary.exists()


@pytest.mark.parametrize("tier", TIERS)
async def test_a_symlink_the_run_left_to_a_folder_outside_is_moved_and_the_folder_untouched(repo: Path, tmp_path: Path,
                                                                                           tier: str) -> None:
    project = hooked(repo)
    outside = tmp_path / "outside"
    (outside / "hooks").mkdir(parents=True)
    (outside / "hooks" / "pre-commit").write_text("the person's own\n")
    notes = await run_unfenced(project, tier, f"ln -s {outside} tools")
    assert (outside / "hooks" / "pre-commit").read_text() == "the person's own\n", notes
    assert sorted(p.name for p in outside.rglob("*")) == ["hooks", "pre-commit"]
    assert not os.path.lexists(repo / "tools")
    assert [os.readlink(link) for link in quarantined(repo, "tools")] == [str(outside)], notes
    assert not [note for note in notes if "hooks" in note], notes


@pytest.mark.parametrize("tier", TIERS)
async def test_the_persons_own_symlinks_on_the_way_are_left_alone(repo: Path, tier: str) -> None:
    """What the run created at a protected path through one is moved all the same (the person's own folder)."""
    project = hooked(repo)
    project.config_path.write_text('[sandbox]\nprotected = ["secrets/*"]\n')
    for folder, link in (("vendor", "tools"), ("vault", "secrets")):  # the person's, before the run
        (repo / folder).mkdir()
        (repo / link).symlink_to(folder)
    (repo / "vault" / "prod.env").write_text("KEY=1\n")
    notes = await run_unfenced(project, tier, "mkdir vendor/hooks && echo planted > vendor/hooks/pre-commit")
    assert os.readlink(repo / "tools") == "vendor" and os.readlink(repo / "secrets") == "vault", notes
    assert (repo / "vault" / "prod.env").read_text() == "KEY=1\n"
    assert not os.path.lexists(repo / "vendor" / "hooks"), notes
    assert [p.read_text() for p in quarantined(repo, "vendor/hooks/pre-commit")] == ["planted\n"], notes
    assert [note.split(";")[0] for note in notes if note.startswith("agent code")] == [
        "agent code created the protected path vendor/hooks"], notes


async def test_a_run_killed_before_its_sweep_has_its_way_symlink_moved_at_the_next_start(repo: Path,
                                                                                         tmp_path: Path) -> None:
    """The crash record of a run that died before its sweep (`Guard.to_json`; hostile when read back: what is not a
    string for a way now is dropped) brings the ways' sweep back at the next start: the link moves, not its target."""
    project = hooked(repo)
    record = Guard.of(repo).to_json()
    assert record.get("standing", {}) == {}
    record["standing"] = {"tools": 7, "README.md": "x"}  # tampered with: only strings, only ways are read
    sweeps = repo / ".agent" / "cache" / "sweeps"
    sweeps.mkdir(parents=True)
    (sweeps / "999999999-x.json").write_text(json.dumps(record))
    outside = tmp_path / "outside"
    (outside / "hooks").mkdir(parents=True)
    (outside / "hooks" / "pre-commit").write_text("the person's own\n")
    (repo / "tools").symlink_to(outside)  # what the killed run left
    box = await Sandbox.start(project, tier="rlimits", warm_workers=0)
    await box.aclose()
    assert (outside / "hooks" / "pre-commit").read_text() == "the person's own\n", box.notices
    assert not os.path.lexists(repo / "tools")
    assert [os.readlink(link) for link in quarantined(repo, "tools")] == [str(outside)], box.notices
    assert [note for note in box.notices if note.startswith("agent code left a symlink at the protected path tools;")
            and note.endswith("(a run interrupted earlier)")], box.notices


async def test_a_protected_path_behind_a_symlink_the_run_left_elsewhere_is_not_moved_through_it(repo: Path,
                                                                                                tmp_path: Path) -> None:
    """A folder the guard does not know as a way (`*.pem` anchors none): nothing is moved through the run's link
    there, the person is told."""
    project = Project.at(repo)
    project.ensure_layout()
    project.config_path.write_text('[sandbox]\nprotected = ["*.pem"]\n')
    (repo / "keys").mkdir()
    (repo / "keys" / "real.key").write_text("mine\n")
    (repo / "keys" / "a.pem").symlink_to("real.key")  # a protected symlink: the sweep checks it after the run
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "a.pem").write_text("the person's own, outside\n")
    notes = await run_unfenced(project, "rlimits", f"mv keys keys.old && ln -s {outside} keys")
    assert (outside / "a.pem").read_text() == "the person's own, outside\n", notes
    assert [note for note in notes if note.startswith(
        "agent code replaced the protected path keys/a.pem and it could not be moved away (keys on its way is a "
        "symlink the run left: nothing was moved through it); check it before you use it")], notes


def test_no_way_leaves_the_project(repo: Path, tmp_path: Path) -> None:
    """A glob leaving the project in its config (a cloned repository's) makes no folder outside it a way to sweep."""
    project = Project.at(repo)
    project.ensure_layout()
    (tmp_path / "mine").write_text("the person's own\n")
    project.config_path.write_text('[sandbox]\nprotected = ["../mine/*", "a/../../mine/*", "keys/*"]\n')
    guard = Guard.of(repo)
    assert guard.ways == {"keys", ".config"} and guard.standing == {}  # .config: on the way to lefthook's configs there
    assert Guard.from_json(guard.to_json(), repo) == Guard(guard.fixed, guard.matches, guard.patterns, ways=guard.ways)
