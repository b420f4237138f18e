"""Suggested tools from repeated call chains, mined from real session transcripts in a real project folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tending_sessions import flaky_workflow, ordinary_sessions, write_session
from tui_agent.core.catalog.state import StateStore
from tui_agent.core.project import Project
from tui_agent.core.tending.suggestions import SuggestionBook


@pytest.fixture()
def project(tmp_path: Path) -> Project:
    return Project.at(tmp_path)


def book_for(project: Project) -> SuggestionBook:
    return SuggestionBook(project.sessions_dir, StateStore(project.agent_dir / "state.db"))


def test_the_four_step_workflow_twice_yields_exactly_one_suggestion(project: Project) -> None:
    write_session(project, [flaky_workflow("test_pay"), [("read_file", {"path": "README.md"})]])
    write_session(project, [flaky_workflow("test_refund")])
    book = book_for(project)

    [chain] = book.current()
    assert chain.steps == ("query_traces", "grep", "run_shell", "run_shell")
    assert chain.count == 2 and len(chain.sessions) == 2
    assert chain.fixed == {"0.service": "checkout", "1.path": "logs/"}
    assert chain.varied_values() == [["test_pay", "test_refund"]]

    note = book.note_for_next_request()
    assert note is not None and note.count("[tuiagent] Repeated call chain") == 1
    assert "query_traces → grep → run_shell → run_shell ran 2 times" in note and "'test_pay'" in note
    assert book.note_for_next_request() is None  # offered once
    assert [c.id for c in book.current()] == [chain.id]  # still listed for the person


def test_one_repetition_is_not_a_chain(project: Project) -> None:
    write_session(project, [flaky_workflow("test_pay")])
    assert book_for(project).current() == []


def test_a_tool_authored_and_used_after_the_chain_covers_it(project: Project) -> None:
    write_session(project, [flaky_workflow("test_pay")])
    write_session(project, [flaky_workflow("test_refund")])
    book = book_for(project)
    assert book.note_for_next_request() is not None
    write_session(project, [[("read_file", {"path": "x.py"})]], authored="flaky_diff")

    assert book.current() == []
    status, _, tool = book.state.suggestions()[book.state.suggestions().popitem()[0]]
    assert (status, tool) == ("covered", "flaky_diff")


def test_a_tool_authored_but_never_called_does_not_cover_it(project: Project) -> None:
    write_session(project, [flaky_workflow("test_pay")])
    path = write_session(project, [flaky_workflow("test_refund")])
    from tui_agent.core.agent.sessions import SessionLog
    from tui_agent.core.events import ToolAuthored
    log = SessionLog(path, path.stem)
    log.append_event(ToolAuthored(name="flaky_diff", kind="tool", source="", commit=None, created=True))
    log.close()
    assert len(book_for(project).current()) == 1


def test_a_dismissed_suggestion_stays_gone_across_reopens(project: Project) -> None:
    write_session(project, [flaky_workflow("a_test"), flaky_workflow("b_test")])
    [chain] = book_for(project).current()
    assert book_for(project).dismiss(chain.id)
    assert book_for(project).current() == []
    assert not book_for(project).dismiss("nope")


def test_ordinary_varied_work_yields_no_suggestion(project: Project) -> None:
    for turns in ordinary_sessions():
        write_session(project, turns)
    assert len(list(project.sessions_dir.glob("*.jsonl"))) >= 10
    book = book_for(project)
    assert [chain.to_dict() for chain in book.current()] == []
    assert book.note_for_next_request() is None


def test_the_workflow_inside_ordinary_work_is_still_found(project: Project) -> None:
    sessions = ordinary_sessions()
    for index, turns in enumerate(sessions):
        write_session(project, turns + ([flaky_workflow(f"test_{index}")] if index in (3, 8) else []))
    [chain] = book_for(project).current()
    assert chain.steps[:2] == ("query_traces", "grep") and chain.count == 2


def test_failed_calls_and_corrupt_lines_are_ignored(project: Project) -> None:
    path = write_session(project, [flaky_workflow("test_pay")])
    with path.open("a", encoding="utf-8") as handle:
        handle.write('{"type": "event", "event": "ToolCallStarted", "data": 5}\n{not json\n')
    write_session(project, [flaky_workflow("test_refund")])
    assert len(book_for(project).current()) == 1
