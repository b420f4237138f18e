"""Layout and conversation behaviour of the real app: narrow tabs, no git repo, prompt history, large sessions, /resume."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.gitrepo import git
from tests.ui_support import SIZE, make_app, ready, row_names, tool_source, wait_until
from tui_agent.ui.screens.git_question import GitQuestionScreen
from tui_agent.ui.screens.pickers import ChoiceScreen
from tui_agent.ui.widgets.entry_window import MAX_MOUNTED
from tui_agent.core.runtime_state import catalog_of


@pytest.fixture(autouse=True)
def no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def visible(app, selector: str) -> bool:  # type: ignore[no-untyped-def]
    widget = app.query_one(selector)
    return widget.display and widget.region.area > 0


async def test_narrow_terminal_switches_to_tabs_and_back(repo: Path) -> None:
    app = make_app(repo)
    async with app.run_test(size=(100, 36)) as pilot:
        await ready(pilot)
        assert app.screen.has_class("-narrow")
        assert visible(app, "#pane-tabs") and visible(app, "#conversation-pane")
        assert not visible(app, "#catalog-pane") and not visible(app, "#diff-pane")
        await pilot.press("f3")
        await pilot.pause()
        assert visible(app, "#catalog-pane") and not visible(app, "#conversation-pane") and not visible(app, "#diff-pane")
        assert app.query_one("#pane-tabs").active == "tab-catalog"  # type: ignore[attr-defined]
        await pilot.press("ctrl+t")
        await pilot.pause()
        assert visible(app, "#diff-pane") and app.panes.active == "diff"
        await pilot.resize_terminal(*SIZE)
        await pilot.pause()
        assert app.screen.has_class("-wide") and not visible(app, "#pane-tabs")
        assert all(visible(app, pane) for pane in ("#conversation-pane", "#catalog-pane", "#diff-pane"))
        assert app.header.sandbox_tier in ("bubblewrap", "rlimits") and app.header.branch == "main" and app.header.model == "no model"


async def test_without_a_git_repo_it_asks_whether_to_create_one(tmp_path: Path) -> None:
    """`y` creates the repository; `c` (without git) is tests/test_ui_startup.py's."""
    folder = tmp_path / "plain"
    folder.mkdir()
    app = make_app(folder)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, GitQuestionScreen), timeout=20, message="the git question")
        assert "not a git repository" in str(app.screen.question)  # type: ignore[attr-defined]
        assert list(folder.iterdir()) == []  # asked before anything is written
        await pilot.press("y")
        await ready(pilot)
        assert (folder / ".git").is_dir()
        await catalog_of(app.runtime).save("double", tool_source("double"))
        await wait_until(pilot, lambda: row_names(app) == ["double"], message="the tool in the pane")
        assert git(folder, "log", "--format=%s").splitlines()[0] == "tuiagent: add tool double"


async def test_quitting_at_the_git_question_creates_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    app = make_app(folder)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, GitQuestionScreen), timeout=20, message="the git question")
        await pilot.press("enter")  # the focused answer is the one that writes nothing
        await wait_until(pilot, lambda: not app.is_running, timeout=20, message="the app to quit")
    assert list(folder.iterdir()) == [] and app.runtime is None


async def test_prompt_is_multiline_with_history(repo: Path) -> None:
    app = make_app(repo)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        prompt = app.prompt_area
        await pilot.press("slash", "h", "e", "l", "p", "enter")
        await pilot.press("a", "ctrl+j", "b")
        assert prompt.text == "a\nb"
        prompt.load_text("")
        await pilot.press("up")
        assert prompt.text == "/help"
        await pilot.press("down")
        assert prompt.text == ""


def write_session(root: Path, turns: int) -> str:
    sessions = root / ".agent" / "sessions"
    sessions.mkdir(parents=True, exist_ok=True)
    lines = [{"type": "session", "id": "big", "model": "m"}]
    for turn in range(turns):
        lines.append({"type": "event", "event": "TurnStarted", "data": {"prompt": f"question {turn}", "session_id": "big"}})
        lines.append({"type": "event", "event": "TextDelta", "data": {"text": f"answer **{turn}**"}})
    (sessions / "big.jsonl").write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    return "big"


async def test_a_2000_message_session_opens_with_a_bounded_window(repo: Path) -> None:
    write_session(repo, 1000)
    app = make_app(repo, resume="big")
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        conversation = app.conversation
        messages = lambda: [entry for entry in conversation.entries if entry.kind in ("user", "assistant")]  # noqa: E731
        await wait_until(pilot, lambda: len(messages()) == 2000, message="the session")
        assert messages()[-1].text == "answer **999**" and conversation.mounted_count <= MAX_MOUNTED
        conversation.focus()
        first = conversation.first_mounted
        for _ in range(40):  # page up to the top of the window: the next page-up mounts older messages
            await pilot.press("pageup")
            if conversation.first_mounted < first:
                break
        assert conversation.first_mounted < first and conversation.mounted_count <= MAX_MOUNTED
        while conversation.first_mounted > 0:  # the rest of the way in big steps, to keep the test fast
            conversation.load_earlier(300)
            await pilot.pause()
        assert conversation.first_mounted == 0 and conversation.mounted_count <= MAX_MOUNTED
        first = conversation.children[conversation.children.index(conversation._earlier) + 1]
        assert "question 0" in str(first.render())  # right after the "earlier" marker
        await app.add_notice("something new")
        assert conversation.at_end and conversation.entries[-1].text == "something new"


async def test_resume_picker_shows_an_earlier_session(repo: Path) -> None:
    write_session(repo, 3)
    app = make_app(repo)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        app.prompt_area.insert("/resume")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ChoiceScreen), message="the session picker")
        await pilot.press("enter")
        await wait_until(pilot, lambda: any(entry.text == "answer **2**" for entry in app.conversation.entries), message="the transcript")
        assert [entry.kind for entry in app.conversation.entries][:2] == ["user", "assistant"]
