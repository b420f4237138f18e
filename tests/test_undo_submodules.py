"""Undo covers what the agent changed inside a submodule (a real `git submodule add`), reports it in the turn's
edited files, and stops with the diff when the person changed such a file since."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fake_messages_api import FakeMessagesAPI, reply, text, tool_use
from tests.gitrepo import git, init_repo
from tests.test_undo_interrupted import agent_turn, service
from tui_agent.cli import main
from tui_agent.core.agent.sessions import SessionLog
from tui_agent.core.events import ToolCallFinished, ToolCallStarted


def with_submodule(tmp_path: Path) -> Path:
    library = init_repo(tmp_path / "library")
    repo = init_repo(tmp_path / "project")
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(library), "lib")
    git(repo, "commit", "-q", "-m", "add the library")
    return repo


async def test_undo_takes_back_the_agents_edits_inside_a_submodule(tmp_path: Path) -> None:
    repo = with_submodule(tmp_path)
    session = SessionLog(repo / ".agent" / "sessions" / "s1.jsonl", "s1")
    undo = service(repo)
    await agent_turn(undo, session, "edit the library", {"lib/app.py": "print('agent')\n", "lib/new.txt": "new\n",
                                                         "app.py": "print('top')\n"})
    assert sorted(undo.last_turn_paths() or []) == ["app.py", "lib/app.py", "lib/new.txt"]
    result = await undo.undo_last(session)
    assert result.ok, result.message
    assert "lib/app.py" in result.restored and "lib/new.txt" in result.restored
    assert (repo / "lib" / "app.py").read_text() == "print('hello')\n" and not (repo / "lib" / "new.txt").exists()
    assert git(repo / "lib", "status", "--porcelain") == "" and git(repo, "status", "--porcelain") == "?? .agent/\n"


async def test_a_person_edit_inside_the_submodule_after_the_turn_stops_the_undo(tmp_path: Path) -> None:
    repo = with_submodule(tmp_path)
    session = SessionLog(repo / ".agent" / "sessions" / "s1.jsonl", "s1")
    undo = service(repo)
    await agent_turn(undo, session, "edit", {"lib/app.py": "print('agent')\n", "app.py": "print('top')\n"})
    (repo / "lib" / "app.py").write_text("print('agent')\nmine = 1\n")
    result = await undo.undo_last(session)
    assert not result.ok and "lib/app.py" in result.message and "+mine = 1" in result.conflict_diff
    assert (repo / "app.py").read_text() == "print('top')\n"  # nothing was changed


async def test_a_commit_inside_a_submodule_is_named_at_the_turns_end_and_never_reported_undone(tmp_path: Path) -> None:
    repo = with_submodule(tmp_path)
    session = SessionLog(repo / ".agent" / "sessions" / "s1.jsonl", "s1")
    undo = service(repo)
    await undo.begin(session, "commit in the library")
    await undo.around_call(ToolCallStarted(call_id="c1", name="a_tool", arguments={}))
    (repo / "lib" / "app.py").write_text("print('agent')\n")
    git(repo / "lib", "commit", "-q", "-am", "agent commit")
    await undo.around_call(ToolCallFinished(call_id="c1", name="a_tool", result="ok", is_error=False, duration_ms=1))
    await undo.end(session)
    assert any("submodule(s) lib" in problem and "cannot take those back" in problem for problem in undo.problems)
    result = await undo.undo_last(session)
    assert not result.ok and "submodule" in result.message and "Undid" not in result.message
    assert git(repo / "lib", "log", "-1", "--format=%s").strip() == "agent commit"
    assert not (repo / ".agent" / "cache" / "undo-intent.json").exists()  # refused before anything was written


def test_p_reports_the_edits_inside_a_submodule_and_undo_takes_them_back(
        tmp_path: Path, api: FakeMessagesAPI, capsys: pytest.CaptureFixture[str]) -> None:
    repo = with_submodule(tmp_path)
    api.enqueue(reply(tool_use("write_file", {"path": "lib/app.py", "content": "print('agent')\n"})), reply(text("ok")))
    assert main(["--project", str(repo), "-p", "edit the library", "--yes"]) == 0
    assert "[edited] 1 project file(s): lib/app.py" in capsys.readouterr().err
    assert main(["--project", str(repo), "--undo"]) == 0
    assert "lib/app.py" in capsys.readouterr().out
    assert (repo / "lib" / "app.py").read_text() == "print('hello')\n"


async def test_an_undo_killed_inside_a_submodule_is_completed_at_the_next_start(tmp_path: Path) -> None:
    import signal

    from tests.test_undo_interrupted import undo_killed_at

    repo = with_submodule(tmp_path)
    session = SessionLog(repo / ".agent" / "sessions" / "s1.jsonl", "s1")
    await agent_turn(service(repo), session, "many in the library",
                     {"app.py": "print('top')\n", **{f"lib/gen/f{index}.txt": f"{index}\n" for index in range(450)}})
    undo_killed_at(repo, session, signal.SIGKILL, 1)
    left = len(list((repo / "lib" / "gen").glob("*.txt")))
    assert 0 < left < 450 and (repo / "app.py").read_text() == "print('hello')\n"
    notice = await service(repo).finish_interrupted()
    assert notice is not None and "now complete" in notice
    assert not (repo / "lib" / "gen").exists() and git(repo / "lib", "status", "--porcelain") == ""
