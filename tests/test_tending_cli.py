"""`tuiagent tools suggest|doctor|repair` against real repositories, real sandboxes and the local Messages API."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fake_messages_api import FakeMessagesAPI, reply, text
from tests.gitrepo import git, user_state
from tests.tending_sessions import flaky_workflow, write_session
from tests.catalog_support import tool_source
from tui_agent.cli import main
from tui_agent.core.project import Project

DATA_TOOL = '''"""Read the greeting."""

DEPENDS_ON = ["greeting.txt"]


def greeting() -> str:
    """The project's greeting."""
    return open("greeting.txt").read().strip()


def test_greeting() -> None:
    assert greeting() == "hello"
'''


def cli(capsys: pytest.CaptureFixture[str], repo: Path, *args: str) -> tuple[int, str, str]:
    code = main(["--project", str(repo), "tools", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_doctor_reports_each_kind_of_finding_with_its_command(dirty_repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tools = dirty_repo / ".agent" / "tools"
    tools.mkdir(parents=True)
    (tools / "double.py").write_text(tool_source("double", test="assert double(1) == 2"))
    (tools / "doubles.py").write_text(tool_source("doubles", test="assert doubles(1) == 2"))
    (tools / "untested.py").write_text(tool_source("untested", "return x - 1").replace("Double a number", "Decrement"))
    (tools / "broken.py").write_text("def broken(:\n")
    before = user_state(dirty_repo)
    assert cli(capsys, dirty_repo, "run", "double", "--arg", "x=2")[0] == 0

    code, out, err = cli(capsys, dirty_repo, "doctor", "--json")
    assert code == 0, err
    report = json.loads(out)
    kinds = {(f["kind"], tuple(f["tools"])) for f in report["findings"]}
    assert ("broken", ("broken",)) in kinds and ("untested", ("untested",)) in kinds
    assert ("near-duplicate", ("double", "doubles")) in kinds
    assert ("never-called", ("doubles",)) in kinds and ("never-called", ("double",)) not in kinds
    commands = {f["tools"][0]: f["command"] for f in report["findings"] if f["kind"] in ("broken", "never-called")}
    assert commands["broken"] == "tuiagent tools repair broken" and commands["doubles"] == "tuiagent tools prune doubles"
    assert report["summary"]["tools"] == 4 and report["summary"]["broken"] == 1 and 0 < report["summary"]["budget_share"] < 1
    code, out, _ = cli(capsys, dirty_repo, "doctor")
    assert code == 0 and out.startswith("4 tools: 1 broken") and "line 1" in out
    assert cli(capsys, dirty_repo, "doctor", "--unused-days", "0")[0] == 2
    assert user_state(dirty_repo) == before


def test_suggest_lists_the_chain_with_its_evidence_and_dismisses_it(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = Project.at(repo)
    write_session(project, [flaky_workflow("test_pay")])
    write_session(project, [flaky_workflow("test_refund")])
    code, out, _ = cli(capsys, repo, "suggest", "--json")
    [suggestion] = json.loads(out)
    assert code == 0 and suggestion["steps"] == ["query_traces", "grep", "run_shell", "run_shell"]
    assert suggestion["count"] == 2 and len(suggestion["sessions"]) == 2
    code, out, _ = cli(capsys, repo, "suggest")
    assert code == 0 and "query_traces → grep → run_shell → run_shell  ran 2 times in 2 session(s)" in out
    assert cli(capsys, repo, "suggest", "--dismiss", suggestion["id"])[0] == 0
    assert json.loads(cli(capsys, repo, "suggest", "--json")[1]) == []
    assert cli(capsys, repo, "suggest", "--dismiss", "nope")[0] == 1


def drifted_repo(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "greeting.txt").write_text("hello\n")
    git(repo, "add", "greeting.txt")
    git(repo, "commit", "-q", "-m", "greeting")
    (repo / ".agent" / "tools").mkdir(parents=True)
    (repo / ".agent" / "tools" / "greeting.py").write_text(DATA_TOOL)
    assert cli(capsys, repo, "list")[0] == 0
    (repo / "greeting.txt").write_text("good morning\n")


def test_repair_prompt_holds_the_drift_diff_the_failing_test_and_the_source(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    drifted_repo(repo, capsys)
    code, out, _ = cli(capsys, repo, "repair", "greeting", "--print-prompt", "--json")
    data = json.loads(out)
    assert code == 0 and data["needs_repair"] is True
    prompt = data["prompt"]
    assert "-hello" in prompt and "+good morning" in prompt and "greeting.txt" in prompt
    assert "test_greeting" in prompt and 'DEPENDS_ON = ["greeting.txt"]' in prompt and "create_tool" in prompt


def test_repair_hands_the_prompt_to_the_agent(repo: Path, api: FakeMessagesAPI, capsys: pytest.CaptureFixture[str]) -> None:
    drifted_repo(repo, capsys)
    api.enqueue(reply(text("I will update it.")))
    code = main(["--project", str(repo), "tools", "repair", "greeting"])
    assert code == 0 and "I will update it." in capsys.readouterr().out
    [request] = api.requests
    assert "+good morning" in request.last_user_text() and "test_greeting" in request.last_user_text()


def test_repair_of_a_healthy_tool_runs_nothing(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    drifted_repo(repo, capsys)
    (repo / "greeting.txt").write_text("hello\n")
    code, out, _ = cli(capsys, repo, "repair", "greeting")
    assert code == 0 and "needs no repair" in out
    assert cli(capsys, repo, "repair", "missing")[0] == 1
