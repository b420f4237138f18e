"""Suggested tools from repeated call chains, mined from real session transcripts in a real project folder."""

from __future__ import annotations

import json
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


FLAKY_TOOL = '''"""Diff a test's passing and failing logs."""


def flaky_diff(name: str) -> str:
    """The sorted log lines of one test.

    Args:
        name: The test's name.
    """
    return name


def test_flaky_diff() -> None:
    assert flaky_diff("a") == "a"
'''


def workflow_replies(name: str) -> list[object]:
    from tests.fake_messages_api import reply, text, tool_use
    return [
        reply(tool_use("grep", {"pattern": name, "path": "logs"})),
        reply(tool_use("read_file", {"path": f"logs/{name}.log"})),
        reply(tool_use("run_shell", {"command": f"sort logs/{name}.log"})),
        reply(tool_use("run_shell", {"command": f"diff logs/{name}.log logs/{name}.log"})),
        reply(text(f"{name} looks stable.")),
    ]


def test_the_model_gets_the_note_once_at_the_next_request_and_not_after_the_tool_is_used(repo: Path, api: object) -> None:
    from tests.fake_messages_api import reply, text, tool_use
    from tui_agent.cli import main

    (repo / "logs").mkdir()
    for name in ("test_pay", "test_refund"):
        (repo / "logs" / f"{name}.log").write_text(f"2 {name} pass\n1 {name} fail\n")
    api.enqueue(*workflow_replies("test_pay"))  # type: ignore[attr-defined]
    assert main(["--project", str(repo), "-p", "why is test_pay flaky?", "--yes"]) == 0
    api.enqueue(*workflow_replies("test_refund"), reply(text("ok")))  # type: ignore[attr-defined]
    assert main(["--project", str(repo), "--continue", "-p", "and test_refund?", "--yes"]) == 0
    assert main(["--project", str(repo), "--continue", "-p", "thanks", "--yes"]) == 0

    notes = [request for request in api.requests  # type: ignore[attr-defined]
             if "[tuiagent] Repeated call chain" in json.dumps(request.messages[-1])]
    assert len(notes) == 1, [(r.last_user_text()[:80], len(r.messages)) for r in notes]
    # at the request right after the second repetition ended (its last call's result), not one call later
    assert api.requests.index(notes[0]) == 9  # type: ignore[attr-defined]
    assert notes[0].messages[-1]["content"][0]["type"] == "tool_result"
    assert "grep → read_file → run_shell → run_shell ran 2 times" in json.dumps(notes[0].messages[-1], ensure_ascii=False)

    api.enqueue(reply(tool_use("create_tool", {"name": "flaky_diff", "source": FLAKY_TOOL})),  # type: ignore[attr-defined]
                reply(tool_use("flaky_diff", {"name": "test_pay"})), reply(text("done")))
    assert main(["--project", str(repo), "--continue", "-p", "make it a tool", "--yes"]) == 0
    assert book_for(Project.at(repo)).current() == []
