"""The approval modal at 80x24 (issue 26): every option on screen and the frame whole, for an edit's diff and for a
shell command, a padded one included."""

from __future__ import annotations

import difflib
import re
from pathlib import Path

import pytest

from tests.test_approval_whole_command import PADDED, screen_text
from tests.ui_support import make_app, wait_until
from tui_agent.core.agent.exec_tools import shell_summary
from tui_agent.core.agent.permissions import ApprovalRequest
from tui_agent.ui.screens.approval import ApprovalScreen

OLD = "".join(f"line {number}\n" for number in range(60))
EDIT = "".join(difflib.unified_diff(OLD.splitlines(keepends=True), OLD.replace("line 5\n", "LINE five\n").replace(
    "line 50\n", "LINE fifty\n").splitlines(keepends=True), "a/notes.txt", "b/notes.txt"))
COMMAND = "pytest -q tests/test_flaky.py -k 'recipe and not slow'"


def request_for(case: str) -> ApprovalRequest:
    if case == "edit":
        return ApprovalRequest("write", "write_file", "edit notes.txt", EDIT)
    command = PADDED if case == "padded" else COMMAND
    return ApprovalRequest("shell", "run_shell", shell_summary(command, False), command, subject=command)


async def shown(repo: Path, request: ApprovalRequest) -> tuple[str, list[str]]:
    app = make_app(repo, sandbox_tier="rlimits", watch_catalog=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.runtime is not None, timeout=30, message="the runtime")
        app.run_worker(app.turns.approve(request))
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), message="the modal")
        await pilot.pause(0.3)
        keys = [choice.key for choice in app.screen.choices]  # type: ignore[attr-defined]
        text = screen_text(app.export_screenshot())
        await pilot.press("n")
        return text, keys


@pytest.mark.parametrize("case", ["edit", "command", "padded"])
async def test_every_option_and_the_whole_frame_fit_at_80_by_24(repo: Path, case: str) -> None:
    text, keys = await shown(repo, request_for(case))
    assert len(keys) >= 4
    for key in keys:
        assert re.search(rf"▊ {re.escape(key)}   \S", text), f"option {key} is not on screen:\n{text}"
    rows = [row for row in text.splitlines() if row.strip() and row != "tuiagent"]  # the SVG title is no row
    top = next((number for number, row in enumerate(rows) if row.startswith("█▀")), None)
    bottom = next((number for number, row in enumerate(rows) if row.startswith("█▄")), None)
    assert top is not None and bottom is not None, f"the frame is clipped:\n{text}"
    assert "Approve" in rows[top + 1], text
    inside = "\n".join(rows[top:bottom])
    assert all(f"▊ {key}   " in inside for key in keys), f"an option is outside the frame:\n{text}"
