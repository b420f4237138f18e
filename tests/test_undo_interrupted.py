"""An undo is a transaction: a real process killed at points of a large undo (SIGKILL, SIGTERM, SIGHUP, SIGINT) has
its undo completed at the next start, and a later undo is never refused as if the person had changed the files."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.gitrepo import git, init_repo
from tui_agent.core.agent.sessions import SessionLog
from tui_agent.core.events import ToolCallFinished, ToolCallStarted
from tui_agent.core.undo.service import UndoService
from tui_agent.core.versioning.checkpoints import Checkpoints

ROOT = Path(__file__).resolve().parent.parent
CHILD = Path(__file__).with_name("undo_child.py")
FILES = 450


def service(repo: Path) -> UndoService:
    checkpoints = Checkpoints.open(repo)
    assert checkpoints is not None
    return UndoService(checkpoints)


async def agent_turn(undo: UndoService, session: SessionLog, prompt: str, write: dict[str, str]) -> None:
    """One turn whose single (catalog-tool-like) call writes `write`: every change in it is the agent's."""
    await undo.begin(session, prompt)
    await undo.around_call(ToolCallStarted(call_id="c1", name="make_files", arguments={}))
    for name, text in write.items():
        (undo.checkpoints.work_tree / name).parent.mkdir(parents=True, exist_ok=True)
        (undo.checkpoints.work_tree / name).write_text(text)
    await undo.around_call(ToolCallFinished(call_id="c1", name="make_files", result="ok", is_error=False, duration_ms=1))
    await undo.end(session)


async def two_turns(repo: Path) -> SessionLog:
    session = SessionLog(repo / ".agent" / "sessions" / "s1.jsonl", "s1")
    undo = service(repo)
    await agent_turn(undo, session, "first", {"app.py": "print('turn one')\n"})
    await agent_turn(undo, session, "many", {"README.md": "# by the agent\n",
                                              **{f"gen/f{index}.txt": f"{index}\n" for index in range(FILES)}})
    return session


def generated(repo: Path) -> int:
    return len(list((repo / "gen").glob("*.txt"))) if (repo / "gen").is_dir() else 0


def undo_killed_at(repo: Path, session: SessionLog, stop: signal.Signals, after_reports: int) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen([sys.executable, str(CHILD), str(repo), str(session.path)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=env)
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "ready"
    for _ in range(after_reports):
        line = child.stdout.readline()
        assert line.startswith("progress "), line + (child.stderr.read() if child.stderr else "")
    child.send_signal(stop)
    child.communicate(timeout=60)
    return child


@pytest.mark.parametrize(("stop", "after_reports"), [
    (signal.SIGKILL, 1), (signal.SIGKILL, 2), (signal.SIGTERM, 1), (signal.SIGHUP, 2), (signal.SIGINT, 1)])
async def test_an_undo_killed_part_way_is_completed_at_the_next_start(
        tmp_path: Path, stop: signal.Signals, after_reports: int) -> None:
    repo = init_repo(tmp_path / "project")
    session = await two_turns(repo)
    assert generated(repo) == FILES
    undo_killed_at(repo, session, stop, after_reports)
    if stop != signal.SIGINT:  # killed: part of the files are back, the rest not (the kill landed mid-way)
        assert 0 < generated(repo) < FILES
    restarted = service(repo)  # the next start
    notice = await restarted.finish_interrupted()
    if stop != signal.SIGINT:
        assert notice is not None and "turn 2" in notice and "now complete" in notice
    assert generated(repo) == 0 and (repo / "README.md").read_text() == "# demo project\n"
    assert not (repo / ".agent" / "cache" / "undo-intent.json").exists()
    assert (repo / "app.py").read_text() == "print('turn one')\n"
    result = await restarted.undo_last(session)  # turn 1 is next: never "you changed gen/f0.txt"
    assert result.ok and "turn 1" in result.message, result.message
    assert (repo / "app.py").read_text() == "print('hello')\n"
    assert git(repo, "status", "--porcelain", "--", ".", ":!.agent") == ""


async def test_an_interrupted_undo_is_finished_by_the_next_undo_of_the_same_process(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "project")
    session = await two_turns(repo)
    undo_killed_at(repo, session, signal.SIGKILL, 1)
    undo = service(repo)
    result = await undo.undo_last(session)  # no start in between: this undo is the interrupted one, finished
    assert result.ok and "turn 2" in result.message and "now complete" in result.message, result.message
    assert generated(repo) == 0 and (repo / "app.py").read_text() == "print('turn one')\n"
    result = await undo.undo_last(session)
    assert result.ok and "turn 1" in result.message, result.message
    assert (repo / "app.py").read_text() == "print('hello')\n"


async def test_an_edit_made_after_the_crash_is_kept_and_reported(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "project")
    session = await two_turns(repo)
    undo_killed_at(repo, session, signal.SIGKILL, 1)
    survivors = sorted((repo / "gen").glob("*.txt"))
    survivors[-1].write_text("the person's own text\n")
    notice = await service(repo).finish_interrupted()
    assert notice is not None and survivors[-1].name in notice
    assert survivors[-1].read_text() == "the person's own text\n" and generated(repo) == 1


async def test_a_large_undo_reports_its_progress(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "project")
    session = await two_turns(repo)
    undo = service(repo)
    reports: list[tuple[int, int]] = []
    undo.progress = lambda done, total: reports.append((done, total))
    assert (await undo.undo_last(session)).ok
    assert reports == [(200, FILES + 1), (400, FILES + 1), (FILES + 1, FILES + 1)]


def test_tuiagent_undo_after_a_killed_one_finishes_it_and_undoes_nothing_more(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import asyncio

    from tui_agent.cli import main

    repo = init_repo(tmp_path / "project")
    session = asyncio.run(two_turns(repo))
    undo_killed_at(repo, session, signal.SIGKILL, 1)
    assert main(["--project", str(repo), "--undo"]) == 0
    out = capsys.readouterr().out
    assert "interrupted" in out and "now complete" in out, out
    assert generated(repo) == 0 and (repo / "app.py").read_text() == "print('turn one')\n"  # turn 1 stays


async def test_an_undo_failing_part_way_says_so_and_the_next_undo_finishes_it(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "project")
    (repo / "docs").mkdir()
    (repo / "docs" / "x.md").write_text("doc\n")
    git(repo, "add", "docs/x.md")
    git(repo, "commit", "-q", "-m", "docs")
    session = SessionLog(repo / ".agent" / "sessions" / "s1.jsonl", "s1")
    undo = service(repo)
    await undo.begin(session, "tidy")
    await undo.around_call(ToolCallStarted(call_id="c1", name="a_tool", arguments={}))
    (repo / "app.py").write_text("print('agent')\n")
    (repo / "docs" / "x.md").unlink()
    (repo / "docs").rmdir()
    await undo.around_call(ToolCallFinished(call_id="c1", name="a_tool", result="ok", is_error=False, duration_ms=1))
    await undo.end(session)
    (repo / "docs").write_text("the person's file named docs\n")  # docs/x.md cannot be put back under it
    result = await undo.undo_last(session)
    assert not result.ok and "stopped part-way" in result.message and "Not undone" not in result.message
    assert (repo / "app.py").read_text() == "print('hello')\n"  # the first file was put back already
    (repo / "docs").unlink()
    result = await undo.undo_last(session)
    assert result.ok and "now complete" in result.message, result.message
    assert (repo / "docs" / "x.md").read_text() == "doc\n"
    assert not (await undo.undo_last(session)).ok  # nothing left to undo: the turn is recorded undone once


def test_tuiagent_undo_of_a_large_turn_prints_its_progress(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import asyncio

    from tui_agent.cli import main

    repo = init_repo(tmp_path / "project")
    asyncio.run(two_turns(repo))
    assert main(["--project", str(repo), "--undo"]) == 0
    err = capsys.readouterr().err
    assert f"undo: 200 of {FILES + 1} files put back" in err and f"undo: {FILES + 1} of {FILES + 1}" in err, err
    assert generated(repo) == 0


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGHUP, signal.SIGKILL])
def test_a_real_tuiagent_undo_stopped_mid_way_is_finished_by_the_next_one(
        tmp_path: Path, stop: signal.Signals, capsys: pytest.CaptureFixture[str]) -> None:
    import asyncio

    from tui_agent.cli import main

    repo = init_repo(tmp_path / "project")
    asyncio.run(two_turns(repo))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen([sys.executable, "-m", "tui_agent.cli", "--project", str(repo), "--undo"], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert child.stderr is not None
    line = child.stderr.readline()
    assert line.startswith("undo: 200 of"), line + child.stderr.read()
    child.send_signal(stop)
    child.communicate(timeout=60)
    assert main(["--project", str(repo), "--undo"]) == 0
    out = capsys.readouterr().out
    assert generated(repo) == 0 and (repo / "app.py").read_text() == "print('turn one')\n", out
    assert main(["--project", str(repo), "--undo"]) == 0  # then turn 1, never "you changed gen/f0.txt"
    assert "turn 1" in capsys.readouterr().out and (repo / "app.py").read_text() == "print('hello')\n"
