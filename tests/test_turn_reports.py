"""Reports tell the truth: the turn's edited files (`-p`'s `[edited]` and `edited_files`) and its diff (the TUI's
"The agent changed N file(s)") hold only what the turn's calls wrote, never a file the person edited meanwhile."""

from __future__ import annotations

from pathlib import Path

from tests.gitrepo import init_repo
from tests.test_undo_interrupted import service
from tui_agent.core.agent.sessions import SessionLog
from tui_agent.core.events import ToolCallFinished, ToolCallStarted


async def test_a_person_edit_during_the_turn_is_not_reported_as_the_agents(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "project")
    session = SessionLog(repo / ".agent" / "sessions" / "s1.jsonl", "s1")
    undo = service(repo)
    await undo.begin(session, "edit app.py")
    (repo / "notes.md").write_text("the person's notes, written while the model was thinking\n")
    await undo.around_call(ToolCallStarted(call_id="c1", name="write_file", arguments={"path": "app.py"}))
    (repo / "app.py").write_text("print('agent')\n")
    await undo.around_call(ToolCallFinished(call_id="c1", name="write_file", result="ok", is_error=False, duration_ms=1))
    (repo / "README.md").write_text("# the person's title\n")
    await undo.end(session)
    assert undo.last_turn_paths() == ["app.py"]
    diff = await undo.turn_diff(session)
    assert diff is not None and diff.count("diff --git") == 1 and "a/app.py" in diff and "notes" not in diff


async def test_a_turn_without_calls_changed_nothing(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "project")
    session = SessionLog(repo / ".agent" / "sessions" / "s1.jsonl", "s1")
    undo = service(repo)
    await undo.begin(session, "just answer")
    (repo / "app.py").write_text("print('the person')\n")
    await undo.end(session)
    assert undo.last_turn_paths() == [] and await undo.turn_diff(session) == ""
