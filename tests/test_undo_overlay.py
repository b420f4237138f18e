"""Undo takes back only what a shell run itself wrote (issue 24): the project is an overlay for the run, so a file the
person edits or creates in another editor while the command runs is theirs, kept by /undo, and said so."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from tests.agent_helpers import agent_runtime, cancel_once_started
from tests.fake_messages_api import FakeMessagesAPI, reply, text, tool_use
from tests.gitrepo import git
from tui_agent.commands.sandbox_status import describe
from tui_agent.core.events import Event, Notice, ToolOutputDelta
from tui_agent.core.project import Project
from tui_agent.core.runtime import Runtime
from tui_agent.core.sandbox import Sandbox
from tui_agent.core.sandbox.policy import SandboxPolicy
from tui_agent.core.sandbox.launch import probe_bubblewrap
from tui_agent.core.runtime_state import agent_of
from tui_agent.core.sandbox import Snippet

pytestmark = pytest.mark.skipif(probe_bubblewrap() is not None, reason="needs bubblewrap")

PERSON_APP = b"print('my edit, made while the command ran')\n\x00\xff"
PERSON_NEW = b"my new file\r\nwith odd bytes \xe9\n"


async def turn_editing_when_started(runtime: Runtime, prompt: str, edit: object) -> list[Event]:
    """Run a turn; when the shell command prints `started` (it is running), call `edit` as the person would."""
    assert agent_of(runtime) is not None
    events: list[Event] = []
    edited = False
    async for event in agent_of(runtime).run_turn(prompt):
        events.append(event)
        if isinstance(event, ToolOutputDelta) and "started" in event.text and not edited:
            edited = True
            assert callable(edit)
            edit()
    assert edited, "the command never said it started"
    return events


async def test_undo_keeps_files_the_person_edits_and_creates_while_a_shell_command_runs(repo: Path,
                                                                                       api: FakeMessagesAPI) -> None:
    original_readme = (repo / "README.md").read_bytes()
    original_app = (repo / "app.py").read_bytes()

    def person() -> None:
        (repo / "app.py").write_bytes(PERSON_APP)  # tracked
        (repo / "mine.txt").write_bytes(PERSON_NEW)  # new

    async with agent_runtime(repo, api) as runtime:
        api.enqueue(reply(tool_use("run_shell", {"command": "echo started; sleep 2; echo shell > shell.txt; "
                                                            "printf 'x\\n' >> README.md"})), reply(text("done")))
        await turn_editing_when_started(runtime, "run a long command", person)
        assert (repo / "shell.txt").read_text() == "shell\n"
        assert (repo / "README.md").read_bytes() == original_readme + b"x\n"
        assert (repo / "app.py").read_bytes() == PERSON_APP and original_app != PERSON_APP
        result = await runtime.core.undo.undo_last(runtime.core.session)
        assert result.ok, result.message
        assert not (repo / "shell.txt").exists()
        assert (repo / "README.md").read_bytes() == original_readme
        assert (repo / "app.py").read_bytes() == PERSON_APP
        assert (repo / "mine.txt").read_bytes() == PERSON_NEW
        assert result.kept == ["app.py", "mine.txt"] and sorted(result.restored) == ["README.md", "shell.txt"]
        assert "Kept as they are: app.py, mine.txt (changed by someone else during the turn" in result.message
        assert runtime.core.sandbox is not None and describe(runtime.core.sandbox)["run_attribution"].startswith("exact")


async def test_a_file_both_the_run_and_the_person_change_keeps_the_persons_and_sets_the_runs_aside(
        repo: Path, api: FakeMessagesAPI) -> None:
    def person() -> None:
        (repo / "app.py").write_bytes(PERSON_APP)

    async with agent_runtime(repo, api) as runtime:
        api.enqueue(reply(tool_use("run_shell", {"command": "printf 'run\\n' >> app.py; echo started; sleep 2; "
                                                            "printf 'more\\n' >> app.py; echo out > out.txt"})),
                    reply(text("done")))
        original = (repo / "app.py").read_bytes()
        events = await turn_editing_when_started(runtime, "append", person)
        assert (repo / "app.py").read_bytes() == PERSON_APP
        aside = list((repo / ".agent" / "cache" / "run-versions").glob("*/app.py"))
        assert len(aside) == 1 and aside[0].read_bytes() == original + b"run\nmore\n"
        notices = " ".join(event.message for event in events if isinstance(event, Notice))
        assert "app.py" in notices and aside[0].relative_to(repo).as_posix() in notices and "yours is kept" in notices
        result = await runtime.core.undo.undo_last(runtime.core.session)
        assert result.ok, result.message
        assert (repo / "app.py").read_bytes() == PERSON_APP and not (repo / "out.txt").exists()
        assert result.kept == ["app.py"] and "Kept as they are: app.py" in result.message
        assert f"set aside: app.py (in {aside[0].relative_to(repo).as_posix()})" in result.message


async def test_a_run_that_deletes_files_is_undone_and_a_file_edited_meanwhile_is_not_deleted(
        repo: Path, api: FakeMessagesAPI) -> None:
    (repo / "gone.txt").write_text("the run deletes me\n")
    (repo / "edited.txt").write_text("the run deletes me too\n")
    (repo / "folder").mkdir()
    (repo / "folder" / "inner.txt").write_text("in a folder the run removes\n")
    git(repo, "add", "gone.txt", "edited.txt", "folder")
    git(repo, "commit", "-q", "-m", "files")

    def person() -> None:
        (repo / "edited.txt").write_bytes(PERSON_NEW)

    async with agent_runtime(repo, api) as runtime:
        api.enqueue(reply(tool_use("run_shell", {"command": "echo started; sleep 2; rm gone.txt edited.txt; "
                                                            "rm -r folder"})), reply(text("done")))
        await turn_editing_when_started(runtime, "delete", person)
        assert not (repo / "gone.txt").exists() and not (repo / "folder").exists()
        assert (repo / "edited.txt").read_bytes() == PERSON_NEW  # changed during the run: not the run's to delete
        result = await runtime.core.undo.undo_last(runtime.core.session)
        assert result.ok, result.message
        assert (repo / "gone.txt").read_text() == "the run deletes me\n"
        assert (repo / "folder" / "inner.txt").read_text() == "in a folder the run removes\n"
        assert (repo / "edited.txt").read_bytes() == PERSON_NEW and result.kept == ["edited.txt"]


async def test_a_cancelled_run_keeps_what_it_wrote_before_the_kill_undoable_and_the_persons_edit(
        repo: Path, api: FakeMessagesAPI) -> None:
    async with agent_runtime(repo, api) as runtime:
        assert agent_of(runtime) is not None
        api.enqueue(reply(tool_use("run_shell", {"command": "echo partial > half.txt; echo started; sleep 30"})),
                    reply(text("never")))
        cancelled_at = await cancel_once_started(runtime, "start something long",
                                                 lambda: (repo / "app.py").write_bytes(PERSON_APP))
        assert time.monotonic() - cancelled_at < 5
        assert (repo / "half.txt").read_text() == "partial\n"  # written before the kill: applied
        result = await runtime.core.undo.undo_last(runtime.core.session)
        assert result.ok, result.message
        assert not (repo / "half.txt").exists() and (repo / "app.py").read_bytes() == PERSON_APP
        assert result.kept == ["app.py"]


async def test_the_sandbox_reports_exactly_what_an_overlay_run_wrote(repo: Path) -> None:
    (repo / "tree").mkdir()
    (repo / "tree" / "old.txt").write_text("old\n")
    (repo / "keep.txt").write_text("keep\n")
    box = await Sandbox.start(Project(repo), tier="bubblewrap", warm_workers=1)
    try:
        box.runs.take_run_writes()
        command = ("import os, shutil\nshutil.rmtree('tree')\nos.mkdir('tree')\nopen('tree/new.txt', 'w').write('n')\n"
                   "os.symlink('keep.txt', 'link')\nos.rename('keep.txt', 'kept.txt')\n")
        result = await box.run(Snippet(command), SandboxPolicy(project_writable=True))
        assert result.ok, result.error
        writes = box.runs.take_run_writes()
        assert len(writes) == 1 and writes[0].attributed
        assert sorted(writes[0].paths) == ["keep.txt", "kept.txt", "link", "tree/new.txt", "tree/old.txt"]
        assert sorted(p.name for p in (repo / "tree").iterdir()) == ["new.txt"]
        assert os_readlink(repo / "link") == "keep.txt" and (repo / "kept.txt").read_text() == "keep\n"
        read_only = await box.run(Snippet("open('x', 'w')"), SandboxPolicy(project_writable=False))
        assert not read_only.ok and box.runs.take_run_writes() == []  # nothing could be written: nothing to report
    finally:
        await box.aclose()


async def test_the_fallback_tier_says_attribution_is_per_call_only(repo: Path) -> None:
    box = await Sandbox.start(Project(repo), tier="rlimits", warm_workers=0)
    try:
        assert "per call only" in describe(box)["run_attribution"]
        result = await box.run(Snippet("open('f.txt', 'w').write('x')"))
        assert result.ok and [w.attributed for w in box.runs.take_run_writes()] == [False]
    finally:
        await box.aclose()


def os_readlink(path: Path) -> str:
    import os

    return os.readlink(path)


async def test_a_folder_the_person_swaps_for_a_symlink_during_the_run_is_never_written_through(
        repo: Path, tmp_path: Path) -> None:
    """Hostile or not, applying a run's writes never follows a path out of the project: the person replaced the run's
    folder with a symlink to elsewhere meanwhile; the run's file is set aside, nothing is written there."""
    (repo / "d").mkdir()
    (repo / "d" / "old.txt").write_text("old\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    box = await Sandbox.start(Project(repo), tier="bubblewrap", warm_workers=1)
    started = asyncio.Event()
    try:
        code = ("import os, time\nopen('d/x.txt', 'w').write('run')\nos.mkfifo('pipe')\n"
                "print('started', flush=True)\ntime.sleep(1.5)\n")
        run = asyncio.create_task(box.run(Snippet(code), SandboxPolicy(project_writable=True), on_output=lambda chunk: started.set()))
        await asyncio.wait_for(started.wait(), 30)
        (repo / "d").rename(repo / "d-moved")
        (repo / "d").symlink_to(elsewhere)
        result = await run
        assert result.ok, result.error
    finally:
        await box.aclose()
    assert list(elsewhere.iterdir()) == [] and (repo / "d").is_symlink()
    assert [p.read_text() for p in (repo / ".agent" / "cache" / "run-versions").glob("*/d/x.txt")] == ["run"]
    assert not (repo / "pipe").exists() and "special file" in result.stderr and "d: " in result.stderr
