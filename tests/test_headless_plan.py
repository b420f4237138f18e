"""`tuiagent -p --permission-mode plan`: the model's plan on stderr, its proposal approved only by a flag."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fake_messages_api import FakeMessagesAPI, reply, text, tool_use
from tui_agent.cli import main

PLAN = [{"content": "read", "status": "completed"}, {"content": "write made.txt", "status": "pending"}]


@pytest.mark.parametrize("approve", [False, True])
def test_plan_mode_prints_the_plan_and_only_a_flag_approves_the_proposal(
        repo: Path, api: FakeMessagesAPI, capsys: pytest.CaptureFixture[str], approve: bool) -> None:
    api.enqueue(reply(tool_use("write_file", {"path": "made.txt", "content": "early"})),
                reply(tool_use("update_plan", {"entries": PLAN})),
                reply(tool_use("propose_plan", {"plan": "write made.txt"})),
                reply(tool_use("write_file", {"path": "made.txt", "content": "x"})), reply(text("Finished.")))
    flags = ["--yes"] if approve else []
    assert main(["--project", str(repo), "-p", "make it", "--permission-mode", "plan", *flags]) == 0
    out, err = capsys.readouterr()
    assert out == "Finished.\n"
    assert "[plan] ☑ read · ☐ write made.txt" in err
    if approve:  # approved by --yes: ask mode, whose writes --yes approves
        assert "[mode] the plan was approved: the permission mode is now ask" in err
        assert (repo / "made.txt").read_text() == "x"
    else:  # no person to ask: the proposal is denied and the session stays in plan mode
        assert "[denied] propose_plan" in err and "--allow propose_plan" in err and "[mode]" not in err
        assert not (repo / "made.txt").exists()
