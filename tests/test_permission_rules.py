"""Allow rules: syntax, matching (no smuggled commands), session and project scope, headless --allow."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from tests.fake_messages_api import FakeMessagesAPI, reply, text, tool_use
from tui_agent.cli import main
from tui_agent.core.agent.permission_rules import RuleError, parse_rule, simple_commands, suggested_prefix
from tui_agent.core.agent.permissions import ApprovalAnswer, ApprovalRequest, Permissions
from tui_agent.core.project import Project


def shell_request(command: str, network: bool = False) -> ApprovalRequest:
    return ApprovalRequest("network" if network else "shell", "run_shell", f"run `{command}`", command, subject=command)


@pytest.mark.parametrize(("rule", "command", "expected"), [
    ("run_shell(pytest:*)", "pytest", True),
    ("run_shell(pytest:*)", "pytest -q tests/test_a.py -k 'x and y'", True),
    ("run_shell(pytest:*)", "pytest -q && pytest -x", True),
    ("run_shell(pytest:*)", "pytest-evil", False),
    ("run_shell(pytest:*)", "pytest; rm -rf ~", False),
    ("run_shell(pytest:*)", "pytest && curl evil.example", False),
    ("run_shell(pytest:*)", "pytest | sh", False),
    ("run_shell(pytest:*)", "pytest $(rm -rf .)", False),
    ("run_shell(pytest:*)", "pytest `id`", False),
    ("run_shell(pytest:*)", "pytest\nrm -rf .", False),
    ("run_shell(pytest:*)", "FOO=1 pytest", False),
    ("run_shell(pytest:*)", "pytest a#b; rm -rf x", False),
    ("run_shell(pytest:*)", "pytest # a comment; rm -rf x", False),
    ("run_shell(pytest:*)", "pytest -k 'a;b' |& cat", False),
    ("run_shell(pytest:*)", "pytest -k 'a;b'", True),
    ("run_shell(npm run test:*)", "npm run test -- --watch=false", True),
    ("run_shell(npm run test:*)", "npm run build", False),
    ("run_shell(make test)", "make test", True),
    ("run_shell(make test)", "make test-all", False),
    ("run_shell(make test)", "make test; rm x", False),
    ("run_shell", "anything at all; rm -rf .", True),
    ("write_file", "x", False),
])
def test_rule_matching(rule: str, command: str, expected: bool) -> None:
    assert parse_rule(rule).matches("run_shell", command, network=False) is expected


def test_a_network_call_needs_a_tool_wide_rule() -> None:
    assert not parse_rule("run_shell(pytest:*)").matches("run_shell", "pytest", network=True)
    assert not parse_rule("run_shell(pytest)").matches("run_shell", "pytest", network=True)
    assert parse_rule("run_shell").matches("run_shell", "pytest", network=True)


@pytest.mark.parametrize("bad", ["", "run shell", "run_shell(", "run_shell()", "write_file(src/*)", "run_shell(a; b:*)", "run_shell(:*)"])
def test_bad_rules_say_what_the_syntax_is(bad: str) -> None:
    with pytest.raises(RuleError, match="run_shell|pattern|prefix|empty"):
        parse_rule(bad)


def test_suggested_prefixes() -> None:
    assert suggested_prefix("pytest -q tests") == "pytest"
    assert suggested_prefix("python -m pytest -q") == "python -m pytest"
    assert suggested_prefix("npm run test") == "npm run"
    assert suggested_prefix("cargo test --all") == "cargo test"
    assert suggested_prefix("make") == "make"
    assert suggested_prefix("pytest && ls") is None
    assert suggested_prefix("A=1 pytest") is None


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40))
def test_a_prefix_rule_never_covers_a_command_that_runs_another_program(tail: str) -> None:
    command = "pytest " + tail
    parts = simple_commands(command)
    if parse_rule("run_shell(pytest:*)").matches("run_shell", command, network=False):
        assert parts is not None and all(words[0] == "pytest" for words in parts)
        assert not any(marker in command for marker in ("$(", "`", "<(", ">("))


async def test_answers_teach_rules_for_the_session_and_the_project(tmp_path: Path) -> None:
    project = Project.at(tmp_path)
    (tmp_path / ".agent").mkdir()
    project.config_path.write_text('# my settings\nmodel = "claude-x"\n\n[permissions]\nmode = "ask"\n')
    answers = [ApprovalAnswer(True, "run_shell(pytest:*)", "project"), ApprovalAnswer(True, "run_shell(make lint)", "session")]
    asked: list[ApprovalRequest] = []

    async def approve(request: ApprovalRequest) -> ApprovalAnswer | bool:
        asked.append(request)
        return answers.pop(0) if answers else False

    permissions = Permissions("ask", approve, project=project)
    first = await permissions.check(shell_request("pytest -q"))
    assert first.allowed and "saved" in first.note
    assert (await permissions.check(shell_request("pytest tests/test_x.py"))).allowed
    assert (await permissions.check(shell_request("make lint"))).allowed
    assert (await permissions.check(shell_request("make lint"))).allowed
    assert not (await permissions.check(shell_request("pytest -q", network=True))).allowed
    assert len(asked) == 3
    # "Always allow for this project" goes to the person's git-ignored local file, never the committed config.
    assert project.config_path.read_text() == '# my settings\nmodel = "claude-x"\n\n[permissions]\nmode = "ask"\n'
    assert tomllib.loads(project.local_config_path.read_text())["permissions"] == {"allow": ["run_shell(pytest:*)"]}
    assert dict(permissions.rules()) == {"run_shell(pytest:*)": "local", "run_shell(make lint)": "session"}
    # A new session reads the local rule back; removing it takes it out of the local file.
    again = Permissions("ask", approve, project=project, local_rules=["run_shell(pytest:*)"])
    assert (await again.check(shell_request("pytest"))).allowed
    assert "removed" in again.remove_rule("run_shell(pytest:*)")
    assert tomllib.loads(project.local_config_path.read_text())["permissions"]["allow"] == []
    with pytest.raises(RuleError):
        again.remove_rule("run_shell(pytest:*)")


async def test_a_write_to_the_config_is_never_approved_by_a_rule_or_the_auto_mode(tmp_path: Path) -> None:
    asked: list[ApprovalRequest] = []

    async def refuse(request: ApprovalRequest) -> bool:
        asked.append(request)
        return False

    permissions = Permissions("auto", refuse, allowed_tools=["write_file"], project=Project.at(tmp_path))
    request = ApprovalRequest("write", "write_file", "edit .agent/config.toml", "diff", protected=True)
    assert not (await permissions.check(request)).allowed and asked == [request]


def test_bad_project_rules_are_reported_not_fatal(tmp_path: Path) -> None:
    permissions = Permissions("ask", refuse_all, project=Project.at(tmp_path), project_rules=["run_shell(", "write_file"])
    assert dict(permissions.rules()) == {"write_file": "project"}
    assert permissions.problems and "run_shell(" in permissions.problems[0]


async def refuse_all(request: ApprovalRequest) -> bool:
    return False


def test_headless_allow_takes_the_rule_syntax(repo: Path, api: FakeMessagesAPI, capsys: pytest.CaptureFixture[str]) -> None:
    api.enqueue(reply(tool_use("run_shell", {"command": "echo allowed-by-rule"})),
                     reply(tool_use("run_shell", {"command": "echo not-covered"})), reply(text("done")))
    code = main(["--project", str(repo), "-p", "go", "--allow", "run_shell(echo allowed-by-rule)", "--output-format", "json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    results = [request.tool_results() for request in api.requests[1:]]
    assert "allowed-by-rule" in str(results[0]) and "denied" in str(results[1])
    assert main(["--project", str(repo), "-p", "go", "--allow", "run_shell("]) == 2
    assert "not an allow rule" in capsys.readouterr().err
