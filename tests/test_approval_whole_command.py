"""Approvals show the whole command (issue 23): the line count, padding and control characters made visible, nothing
cut without saying so; in the modal at 80x24 (every option on screen) and in a headless denial message."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from tests.fake_messages_api import FakeMessagesAPI, reply, text, tool_use
from tests.ui_support import make_app, wait_until
from tui_agent.cli import main
from tui_agent.core.agent.command_view import one_line, visible_lines
from tui_agent.core.agent.exec_tools import shell_summary
from tui_agent.core.agent.permissions import ApprovalRequest
from tui_agent.ui.screens.approval import ApprovalScreen

PADDED = "pytest -q tests/" + " " * 400 + "\n" * 60 + "echo HIDDEN-TAIL > hidden.txt"


def screen_text(svg: str) -> str:
    """The terminal's rows as plain text, from Textual's SVG screenshot."""
    rows: dict[float, list[str]] = {}
    for y, chunk in re.findall(r'<text[^>]*y="([\d.]+)"[^>]*>(.*?)</text>', svg, re.DOTALL):
        rows.setdefault(float(y), []).append(html.unescape(re.sub("<[^>]+>", "", chunk)).replace("\xa0", " "))
    return "\n".join("".join(rows[y]) for y in sorted(rows))


async def shown_modal(repo: Path, command: str, network: bool | tuple[str, ...] = False) -> str:
    app = make_app(repo, sandbox_tier="rlimits", watch_catalog=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.runtime is not None, timeout=30, message="the runtime")
        request = ApprovalRequest("network" if network else "shell", "run_shell", shell_summary(command, network),
                                  command, subject=command)
        app.run_worker(app.turns.approve(request))
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), message="the modal")
        await pilot.pause(0.3)
        shown = screen_text(app.export_screenshot())
        await pilot.press("n")
        return shown


async def test_the_modal_shows_a_padded_commands_tail_and_its_line_count(repo: Path) -> None:
    shown = await shown_modal(repo, PADDED)
    assert "echo HIDDEN-TAIL > hidden.txt" in shown, shown
    assert "61 lines" in shown and "400 spaces" in shown and "59 empty lines" in shown, shown
    assert "Deny (esc)" in shown and "Allow once" in shown, shown


async def test_every_option_fits_at_80_by_24(repo: Path) -> None:
    command = "pytest -q tests/test_flaky.py -k 'recipe and not slow'"
    shown = await shown_modal(repo, command)
    for key in ("y", "e", "E", "p", "P", "t", "T", "n"):
        assert re.search(rf"▊ {key}   \S", shown), f"option {key} is not on screen:\n{shown}"
    assert command.replace(" ", "") in shown.replace(" ", "")  # the SVG drops spaces between highlighted words


async def test_control_characters_are_shown_not_interpreted(repo: Path) -> None:
    command = "ls\x1b[2K\rrm -rf build \u202eexe.txt"
    shown = await shown_modal(repo, command)
    assert "⟨\\x1b⟩[2K⟨\\x0d⟩rm -rf build ⟨U+202E⟩exe.txt" in shown, shown


def test_one_line_form_keeps_the_tail_and_says_what_it_cuts() -> None:
    assert one_line(PADDED).endswith("echo HIDDEN-TAIL > hidden.txt")
    long = "echo " + "x" * 1000
    cut = one_line(long, 100)
    assert cut.startswith("echo xxx") and "905 more characters" in cut
    assert [numbers for numbers, _row in visible_lines(PADDED)] == ["1", "2-60", "61"]


def test_a_headless_denial_names_the_whole_command(repo: Path, api: FakeMessagesAPI,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    api.enqueue(reply(tool_use("run_shell", {"command": PADDED})), reply(text("Understood.")))
    code = main(["--project", str(repo), "-p", "run the tests"])
    err = capsys.readouterr().err
    assert code == 0
    denial = next(line for line in err.splitlines() if line.startswith("[denied]"))
    assert "HIDDEN-TAIL" in denial and "61 lines" in denial and "400 spaces" in denial, denial
    assert not (repo / "hidden.txt").exists()


async def test_a_network_command_shows_the_names_its_grant_reaches(repo: Path) -> None:
    """Issue 33: the title says what the grant reaches (`[sandbox] network`), not just "internet"."""
    shown = await shown_modal(repo, "pip install requests", network=("pypi.org", "*.pythonhosted.org"))
    title = re.sub(r"█\s*\n\s*█", " ", shown)  # the title wraps inside the modal's border
    assert "WITH NETWORK ACCESS (only pypi.org, *.pythonhosted.org)" in title, shown
