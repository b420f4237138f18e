"""An overlay that cannot be mounted for one run, after the sandbox started with a working one: the real `mount` in the
worker's launcher fails (its upper folder on a read-only mount, which the kernel refuses), the worker exits with
MOUNT_FAILED before its interpreter starts, and the run goes again without an overlay (dispatch.py): the command runs
once, its writes are checked against the project's stamps of its start (`WritableRuns.after_mount_failed`), and every
later writable run is fenced without an overlay."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from tests.mounts import needs_mount, read_only
from tui_agent.core.project import Project
from tui_agent.core.sandbox import Sandbox, SandboxPolicy, ShellCommand, writable_runs
from tui_agent.core.sandbox.launch import probe_bubblewrap
from tui_agent.core.sandbox.policy import RunWrites
from tui_agent.core.sandbox.launch import OverlayDirs

WRITABLE = SandboxPolicy(timeout_s=30, project_writable=True)
RUN_ONCE = "echo run >> ran.txt && printf '{}' > .mcp.json && echo ok"
"""Counts its runs in ran.txt and creates a protected path (moved to the quarantine after the run)."""


@needs_mount
@pytest.mark.skipif(probe_bubblewrap() is not None, reason="needs bubblewrap")
async def test_a_run_whose_overlay_mount_fails_runs_once_without_one_and_is_checked(repo: Path,
                                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    project = Project.at(repo)
    project.ensure_layout()
    prepared: list[OverlayDirs] = []
    real_prepare = writable_runs.prepare
    with contextlib.ExitStack() as mounts:

        def upper_on_a_read_only_mount(folder: Path) -> OverlayDirs:
            """The real overlay folders; the first run's upper folder bound read-only (the kernel refuses it)."""
            dirs = real_prepare(folder)
            if not prepared:
                mounts.enter_context(read_only(dirs.upper))
            prepared.append(dirs)
            return dirs

        box = await Sandbox.start(project, tier="bubblewrap", warm_workers=0)
        try:
            if box.runs.overlay_problem is not None:
                pytest.skip(f"no overlay here: {box.runs.overlay_problem}")
            monkeypatch.setattr(writable_runs, "prepare", upper_on_a_read_only_mount)
            seen = len(box.notices)
            failed = await box.run(ShellCommand(RUN_ONCE, 30), WRITABLE)
            notes, writes = box.notices[seen:], box.runs.take_run_writes()
            problem = box.runs.overlay_problem
            after = await box.run(ShellCommand("echo later > later.txt", 30), WRITABLE)
            later_writes = box.runs.take_run_writes()
        finally:
            mounts.close()  # before the scratch folder holding the mount point is deleted
            await box.aclose()
    assert len(prepared) == 1, prepared  # the first run tried an overlay; no later run did
    assert failed.ok and failed.value["exit_code"] == 0 and failed.value["stdout"] == "ok\n", failed
    assert (repo / "ran.txt").read_text() == "run\n"  # it ran exactly once
    assert problem is not None and problem.startswith("the project could not be mounted as an overlay"), problem
    assert writes == [RunWrites(False)]  # undo counts that call's changes unattributed
    assert not (repo / ".mcp.json").exists()
    assert [p.read_text() for p in (repo / ".agent" / "quarantine").glob("*/.mcp.json")] == ["{}"]
    assert [note for note in notes if note.startswith("agent code created the protected path .mcp.json; moved to")]
    assert all(f"[tuiagent] {note}" in failed.stderr for note in notes) and notes, notes
    assert after.ok and after.value["exit_code"] == 0 and (repo / "later.txt").read_text() == "later\n", after
    assert later_writes == [RunWrites(False)]  # fenced: no overlay
