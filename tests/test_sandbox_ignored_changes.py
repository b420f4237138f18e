"""Delayed effects through the project's virtualenv and other ignored trees (issue 23): during a writable run the
venv is read-only unless the call said it changes it; a planted .pth or sitecustomize is flagged; every change to a
git-ignored file (caches aside) is reported to the person and the model. Both tiers, checked by effect."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.gitrepo import with_ignored_venv
from tui_agent.core.agent.exec_tools import run_shell
from tui_agent.core.agent.permissions import ApprovalRequest, Permissions
from tui_agent.core.agent.toolbase import ToolContext, ToolFailure
from tui_agent.core.project import Project
from tui_agent.core.sandbox import Sandbox
from tui_agent.core.sandbox import Snippet

TIERS = ["bubblewrap", "rlimits"]
PLANT = ("import pathlib, glob\n"
         "site = glob.glob('.venv/lib/python3*/site-packages')[0]\n"
         "pathlib.Path(site, 'evil.pth').write_text('import os; os.system(\"echo pwned\")\\n')\n")


class Asked:
    def __init__(self, answer: bool) -> None:
        self.answer = answer
        self.requests: list[ApprovalRequest] = []

    async def __call__(self, request: ApprovalRequest) -> bool:
        self.requests.append(request)
        return self.answer


def project_with_venv(repo: Path) -> Path:
    """The repository with a real, git-ignored .venv and a script that plants a .pth in it."""
    return with_ignored_venv(repo, "plant.py", PLANT)


async def shell(repo: Path, tier: str, command: str, *, rules: tuple[str, ...] = (), answer: bool = False,
                **args: Any) -> tuple[str, list[str], Asked]:
    """run_shell as the agent calls it; the text the model gets, the sandbox's notices (what the person is told)."""
    asked = Asked(answer)
    box = await Sandbox.start(Project.at(repo), tier=tier, warm_workers=0)
    try:
        ctx = ToolContext(Project.at(repo), Permissions("ask", asked, allowed_tools=rules), box)
        try:
            output = (await run_shell(ctx, {"command": command, **args})).text
        except ToolFailure as failure:
            output = str(failure)
        return output, list(box.notices), asked
    finally:
        await box.aclose()


@pytest.mark.parametrize("tier", TIERS)
async def test_a_rule_covered_command_cannot_plant_a_pth_in_the_venv(repo: Path, tier: str) -> None:
    site = project_with_venv(repo)
    output, notices, asked = await shell(repo, tier, "python plant.py", rules=("run_shell(python plant.py:*)",))
    assert asked.requests == []  # the rule covered it, as `run_shell(pytest:*)` covers a conftest.py
    planted = (site / "evil.pth").exists()
    if tier == "bubblewrap":
        assert not planted, output
        assert "Read-only file system" in output
    else:  # the fallback tier cannot make the venv read-only (listed miss): the plant is flagged instead
        assert planted
        assert any("evil.pth" in note and "start-up file" in note for note in notices), notices


async def test_changing_the_venv_is_its_own_approval_and_still_flagged(repo: Path) -> None:
    site = project_with_venv(repo)
    output, notices, asked = await shell(repo, "bubblewrap", "python plant.py",
                                         rules=("run_shell(python plant.py:*)",), answer=True, changes_venv=True)
    assert len(asked.requests) == 1, "a prefix rule must not cover a call that may change the virtualenv"
    assert "MAY CHANGE THE PROJECT'S VIRTUALENV" in asked.requests[0].summary
    assert (site / "evil.pth").exists(), output
    assert any("created .venv/lib/" in note and "evil.pth" in note and "start-up file" in note for note in notices)


async def test_denied_venv_change_changes_nothing(repo: Path) -> None:
    site = project_with_venv(repo)
    output, _notices, _asked = await shell(repo, "bubblewrap", "python plant.py", answer=False, changes_venv=True)
    assert "denied" in output and not (site / "evil.pth").exists()


@pytest.mark.parametrize("tier", TIERS)
async def test_changes_to_ignored_files_are_reported_caches_are_not(repo: Path, tier: str) -> None:
    project_with_venv(repo)
    (repo / "build").mkdir()
    (repo / "build" / "old.txt").write_text("old")
    command = ("mkdir -p build pkg/__pycache__ && echo new > build/out.txt && rm build/old.txt "
               "&& echo x > pkg/__pycache__/m.pyc")
    output, notices, _asked = await shell(repo, tier, command, answer=True)
    assert "exit code: 0" in output, output
    report = next((note for note in notices if "files git ignores" in note), "")
    assert "build/out.txt (created)" in report and "build/old.txt (removed)" in report, notices
    assert "__pycache__" not in report


@pytest.mark.parametrize("tier", TIERS)
async def test_a_quiet_run_reports_nothing(repo: Path, tier: str) -> None:
    project_with_venv(repo)
    _output, notices, _asked = await shell(repo, tier, "ls -la", answer=True)
    assert not any("ignores" in note or "start-up" in note for note in notices), notices


async def test_an_unused_project_venv_is_read_only_too(repo: Path) -> None:
    """A restricted project's .venv is not used, yet the person may run it later: it stays read-only."""
    site = project_with_venv(repo)
    box = await Sandbox.start(Project.at(repo), tier="bubblewrap", warm_workers=0, project_venv=False)
    try:
        assert box.toolchain is not None and box.toolchain.venv != repo / ".venv"
        result = await box.run(Snippet(PLANT))
    finally:
        await box.aclose()
    assert not result.ok and "Read-only file system" in (result.error or ""), result
    assert not (site / "evil.pth").exists()


async def test_a_virtualenv_made_during_the_session_is_read_only_at_the_next_run(repo: Path) -> None:
    """Warm workers were started before the .venv existed: the next writable run must not use them."""
    box = await Sandbox.start(Project.at(repo), tier="bubblewrap", warm_workers=1)
    try:
        assert (await box.run(Snippet("1"))).ok  # warm workers are up, made for a project without a .venv
        site = project_with_venv(repo)
        result = await box.run(Snippet(PLANT))
    finally:
        await box.aclose()
    assert not result.ok and not (site / "evil.pth").exists(), result


@pytest.mark.parametrize("name", ["sitecustomize.py", "usercustomize.py", "zz_startup.pth"])
async def test_every_kind_of_start_up_file_is_flagged(repo: Path, name: str) -> None:
    """Planted where the venv's interpreter reads at start (a writable run on the fallback tier, or an approved
    changes_venv run): each is flagged by name, on both tiers' report."""
    site = project_with_venv(repo)
    plant = f"import glob, pathlib\npathlib.Path(glob.glob('.venv/lib/python3*/site-packages')[0], {name!r}).write_text('x = 1\\n')\n"
    (repo / "plant2.py").write_text(plant)
    for tier, extra in (("rlimits", {}), ("bubblewrap", {"changes_venv": True})):
        (site / name).unlink(missing_ok=True)
        _output, notices, _asked = await shell(repo, tier, "python plant2.py", answer=True, **extra)
        assert (site / name).exists()
        assert any(name in note and "start-up file" in note for note in notices), (tier, notices)


async def test_a_denied_venv_command_names_the_venv_program_headless(repo: Path) -> None:
    """The approval's summary (what a headless denial repeats) says the program comes from the project's venv."""
    project_with_venv(repo)
    program = repo / ".venv" / "bin" / "pytest"
    program.write_text("#!/bin/sh\necho pwned > pwned.txt\n")
    program.chmod(0o755)
    output, _notices, asked = await shell(repo, "bubblewrap", "pytest -q", answer=False)
    assert "`pytest` runs .venv/bin/pytest from the project's virtualenv" in asked.requests[0].summary
    assert ".venv/bin/pytest" in output and not (repo / "pwned.txt").exists()
