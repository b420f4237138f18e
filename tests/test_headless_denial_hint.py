"""A headless denial suggests the allow rule that covers the denied call (issue 26): `python -m pytest -q` gets
`run_shell(python -m pytest:*)`, not `run_shell(pytest:*)`, and that rule then lets the same call run."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from tests.fake_messages_api import FakeMessagesAPI, reply, text, tool_use
from tui_agent.cli import main
from tui_agent.commands.run import HEADLESS_DENIAL_HINT
from tui_agent.core.agent.permissions import ApprovalRequest, Permissions, deny_all

COMMAND = "python -m pytest -q"


def denied_hint(repo: Path, api: FakeMessagesAPI, call: tuple[str, dict[str, str]], *flags: str) -> str:
    api.enqueue(reply(tool_use(*call)), reply(text("done")))
    assert main(["--project", str(repo), "-p", "go", *flags]) == 0
    return str(api.requests[-1].tool_results()[0]["content"])


def test_the_hint_names_a_rule_that_covers_the_denied_command(repo: Path, api: FakeMessagesAPI,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    content = denied_hint(repo, api, ("run_shell", {"command": COMMAND}))
    assert "denied" in content and "--yes" in content, content
    suggested = re.search(r"--allow '([^']+)'", content)
    assert suggested is not None and suggested.group(1) == "run_shell(python -m pytest:*)", content
    assert "run_shell(pytest:*)" not in content

    again = denied_hint(repo, api, ("run_shell", {"command": COMMAND}), "--allow", suggested.group(1))
    assert "denied" not in again, again  # the suggested rule lets the very same call run


def test_a_tool_without_command_patterns_gets_its_tool_wide_rule(repo: Path, api: FakeMessagesAPI) -> None:
    content = denied_hint(repo, api, ("write_file", {"path": "notes.txt", "content": "hi\n"}))
    assert "--allow write_file" in content, content
    assert not (repo / "notes.txt").exists()


@pytest.mark.parametrize(("kind", "command", "rule"), [
    ("shell", "npm run build", "run_shell(npm run:*)"),
    ("shell", "pytest -q > report.txt", "run_shell(pytest -q > report.txt)"),  # a prefix rule names no redirection
    ("network", "pip download requests", "run_shell"),  # a network call takes only the tool-wide rule
])
async def test_the_suggested_rule_covers_the_call(kind: str, command: str, rule: str) -> None:
    request = ApprovalRequest(kind, "run_shell", command, command, subject=command)  # type: ignore[arg-type]
    denied = await Permissions("ask", deny_all, denial_hint=HEADLESS_DENIAL_HINT).check(request)
    assert f"--allow {shlex.quote(rule)}" in denied.reason, denied.reason
    allowed = await Permissions("ask", deny_all, allowed_tools=[rule]).check(request)
    assert allowed.allowed
