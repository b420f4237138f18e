"""Virtualenv discovery is safe (issues 22 and 23): a venv git tracks is never used, a pyvenv.cfg `home` is used only
when it is a real Python installation and never shows the sandbox a folder it hides, a restricted project's venv is
not used, and an approval says when a command runs a program from the project's venv."""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.gitrepo import git
from tui_agent.core.project import Project
from tui_agent.core.sandbox import Sandbox, SandboxPolicy
from tui_agent.core.sandbox.toolchain import discover
from tui_agent.core.sandbox import Snippet

TIERS = ["bubblewrap", "rlimits"]


def fake_venv(folder: Path, home: str = "/usr/bin") -> Path:
    """A virtualenv-shaped folder whose bin/ holds a `git` and a `pytest` that leave a mark in the project."""
    (folder / "bin").mkdir(parents=True)
    (folder / "pyvenv.cfg").write_text(f"home = {home}\nversion = 3.12.0\n")
    for name in ("git", "pytest"):
        program = folder / "bin" / name
        program.write_text(f"#!/bin/sh\necho {name} > \"$PWD/ran-from-venv-{name}\"\n")
        program.chmod(0o755)
    return folder


@pytest.fixture(autouse=True)
def no_active_venv(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    monkeypatch.delenv("UV_PROJECT_ENVIRONMENT", raising=False)


@pytest.fixture
def host_tmp_secret() -> Iterator[Path]:
    """A private file of the person's in the host's /tmp (which the sandbox hides)."""
    folder = Path(f"/tmp/tuiagent-private-{secrets.token_hex(4)}")
    folder.mkdir(mode=0o700)
    secret = folder / "secret.txt"
    secret.write_text("the person's private data")
    secret.chmod(0o600)
    yield secret
    shutil.rmtree(folder)


async def run_in_sandbox(root: Path, tier: str, code: str, **start: object) -> object:
    box = await Sandbox.start(Project.at(root), tier=tier, warm_workers=0, **start)  # type: ignore[arg-type]
    try:
        result = await box.run(Snippet(code), SandboxPolicy(project_writable=True))
    finally:
        await box.aclose()
    return result.value if result.ok else result.error


@pytest.mark.parametrize("tier", TIERS)
@pytest.mark.parametrize("name", ["venv", ".venv"])
async def test_a_committed_virtualenv_is_never_used(repo: Path, tier: str, name: str) -> None:
    fake_venv(repo / name)
    git(repo, "add", "-f", name)
    git(repo, "commit", "-q", "-m", "a committed virtualenv")
    toolchain = discover(repo)
    assert toolchain.venv is None and any("tracked by git" in p for p in toolchain.problems), toolchain
    await run_in_sandbox(repo, tier, "import subprocess\nsubprocess.run(['git', 'status'], capture_output=True)")
    assert not (repo / "ran-from-venv-git").exists(), "the committed venv's git ran"


async def test_a_committed_symlink_to_a_virtualenv_is_never_used(repo: Path, tmp_path: Path) -> None:
    target = fake_venv(tmp_path / "elsewhere-venv")
    (repo / ".venv").symlink_to(target)
    git(repo, "add", ".venv")
    git(repo, "commit", "-q", "-m", "a committed link")
    assert discover(repo).venv is None


def test_an_untracked_virtualenv_is_still_the_projects(repo: Path) -> None:
    fake_venv(repo / ".venv")
    assert discover(repo).venv == repo / ".venv"


@pytest.mark.parametrize("tier", TIERS)
async def test_pyvenv_home_never_shows_the_hosts_tmp(repo: Path, tier: str, host_tmp_secret: Path) -> None:
    fake_venv(repo / ".venv", home="/tmp/anything")
    toolchain = discover(repo)
    assert not any(str(folder) in ("/tmp", "/tmp/anything") for folder in toolchain.read_only), toolchain.read_only
    read = await run_in_sandbox(repo, tier, f"open({str(host_tmp_secret)!r}).read()")
    if tier == "bubblewrap":
        assert read != "the person's private data", "the host's /tmp was shown through pyvenv.cfg"
    else:  # no mount namespace: the fallback tier's listed miss (the file system is the user's)
        assert read == "the person's private data"


def test_pyvenv_home_must_be_a_real_python_installation(repo: Path) -> None:
    fake_venv(repo / ".venv", home="/etc/ssl")  # not a Python installation: its parent (/etc) is not bound
    assert Path("/etc") not in discover(repo).read_only
    real_prefix = Path(os.path.realpath(sys.base_prefix))
    (repo / ".venv" / "pyvenv.cfg").write_text(f"home = {real_prefix / 'bin'}\n")
    assert real_prefix in discover(repo).read_only or str(real_prefix).startswith("/usr")


def test_a_link_from_the_project_to_a_virtualenv_in_tmp_is_refused(repo: Path) -> None:
    outside = Path(f"/tmp/tuiagent-venv-{secrets.token_hex(4)}")
    try:
        fake_venv(outside)
        (repo / ".venv").symlink_to(outside)  # made by agent code, untracked
        toolchain = discover(repo)
        assert toolchain.venv is None and any("hides" in p for p in toolchain.problems), toolchain.problems
    finally:
        shutil.rmtree(outside)


@pytest.mark.parametrize("tier", TIERS)
async def test_a_restricted_project_venv_is_not_used(repo: Path, tier: str) -> None:
    fake_venv(repo / ".venv")
    assert discover(repo, project_venv=False).venv is None
    assert str(repo / ".venv" / "bin") not in discover(repo, project_venv=False).path
    await run_in_sandbox(repo, tier, "import subprocess\nsubprocess.run(['git', 'status'], capture_output=True)",
                         project_venv=False)
    assert not (repo / "ran-from-venv-git").exists()
    await run_in_sandbox(repo, tier, "import subprocess\nsubprocess.run(['git', 'status'], capture_output=True)")
    assert (repo / "ran-from-venv-git").exists(), "control: a trusted project's venv comes first on PATH"


async def test_the_approval_says_a_program_comes_from_the_projects_venv(repo: Path) -> None:
    fake_venv(repo / ".venv")
    box = await Sandbox.start(Project.at(repo), tier="rlimits", warm_workers=0)
    try:
        notes = box.program_notes("pytest -q && git status | grep x")
        assert any("`git` runs .venv/bin/git" in note and "instead of /usr/bin/git" in note for note in notes), notes
        assert any("`pytest`" in note for note in notes), notes
        assert box.program_notes("ls -la") == []
    finally:
        await box.aclose()


async def test_the_modal_shows_the_venv_note(repo: Path) -> None:
    from tests.test_approval_whole_command import screen_text
    from tests.ui_support import make_app, wait_until
    from tui_agent.core.agent.exec_tools import run_shell
    from tui_agent.core.agent.permissions import Permissions
    from tui_agent.core.agent.toolbase import ToolContext, ToolFailure
    from tui_agent.ui.screens.approval import ApprovalScreen

    fake_venv(repo / ".venv")
    app = make_app(repo, sandbox_tier="rlimits", watch_catalog=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: app.runtime is not None and app.runtime.core.sandbox is not None, timeout=30,
                         message="the runtime")
        context = ToolContext(Project.at(repo), Permissions("ask", app.turns.approve), app.runtime.core.sandbox)
        async def ask() -> None:
            with contextlib.suppress(ToolFailure):  # the person denies below
                await run_shell(context, {"command": "git status"})

        app.run_worker(ask())
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), message="the modal")
        await pilot.pause(0.3)
        shown = screen_text(app.export_screenshot())
        await pilot.press("n")
    assert "`git` runs .venv/bin/git from the project's virtualenv" in shown, shown
    assert not (repo / "ran-from-venv-git").exists()
