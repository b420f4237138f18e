"""A question that pops up while the person types their next prompt takes none of that typing as its answer: the keys
go on into the prompt box, and a key after a pause answers (ui/typeahead.py, used by the approval modal)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from tests.fake_messages_api import reply, text, tool_use
from tests.scripted_model import ScriptedModel
from tests.ui_support import make_app, notifications, ready, send, turn_answered, wait_until
from tui_agent.ui.screens.approval import ApprovalScreen
from tui_agent.ui.typeahead import TYPE_AHEAD_S
from tui_agent.ui.widgets.prompt import PromptArea
from textual.app import App, ComposeResult


class PromptOnly(App[None]):
    """Just a prompt box, for a question to pop up over."""

    def compose(self) -> ComposeResult:
        yield PromptArea(id="prompt")

class StoppedClock:
    """The clock the prompt box and the questions read (time.monotonic): it moves only when the test says the person
    paused, so keys a loaded machine delivers slowly are still one burst of typing."""

    def __init__(self) -> None:
        self.now = time.monotonic()

    def monotonic(self) -> float:
        return self.now

    def pause(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture(autouse=True)
def clock(monkeypatch: pytest.MonkeyPatch) -> StoppedClock:
    stopped = StoppedClock()
    monkeypatch.setattr("tui_agent.ui.typeahead.time", stopped)
    monkeypatch.setattr("tui_agent.ui.widgets.prompt.time", stopped)
    return stopped


TYPED = "and then run the tests please"  # t, e, p, n and the rest: answer keys of the shell approval


async def test_typing_the_next_prompt_when_an_approval_pops_up_goes_on_into_the_prompt(repo: Path, scripted: ScriptedModel,
                                                                                       clock: StoppedClock) -> None:
    typed_on = scripted.hold(reply(tool_use("run_shell", {"command": "echo hi"})))  # asked once the person types on
    scripted.enqueue(reply(text("done")))
    app = make_app(repo, client=scripted, sandbox_tier="rlimits")
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        await send(pilot, app, "go")
        typed = 0
        while not isinstance(app.screen, ApprovalScreen):  # the person types on while the turn runs
            assert typed < 200, "the approval never came"
            await pilot.press(TYPED[typed % len(TYPED)].replace(" ", "space"))
            typed += 1
            if typed == 5:
                typed_on.set()
            await asyncio.sleep(0.08)
        for key in "tyeT":  # a moment after it popped up: still the same typing
            await pilot.press(key)
            typed += 1
            await asyncio.sleep(0.08)
        await pilot.pause(0.1)
        assert isinstance(app.screen, ApprovalScreen), "a key of the typing answered the approval"
        assert app.runtime.core.permissions.rules() == []
        expected = "".join(TYPED[i % len(TYPED)] for i in range(typed - 4)) + "tyeT"
        assert app.prompt_area.text == expected, (app.prompt_area.text, expected)  # nothing typed was lost
        assert any("typing went on into the prompt box" in message for message in notifications(app))
        clock.pause(TYPE_AHEAD_S + 0.2)  # the person stops, reads, answers
        await pilot.press("n")
        await wait_until(pilot, lambda: turn_answered(app, "done"), timeout=60, message="the turn, denied")
        assert "denied" in str(scripted.requests[-1].messages[-1]) and app.runtime.core.permissions.rules() == []


async def test_an_approval_that_finds_the_prompt_box_empty_answers_the_first_key(repo: Path, scripted: ScriptedModel) -> None:
    scripted.enqueue(reply(tool_use("run_shell", {"command": "echo hi"})), reply(text("done")))
    app = make_app(repo, client=scripted, sandbox_tier="rlimits")
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        await pilot.press(*"go")  # typed, then sent: the box is empty when the question comes
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), timeout=30, message="the approval")
        await pilot.press("y")
        await wait_until(pilot, lambda: turn_answered(app, "done"), timeout=60, message="the turn, allowed")
        assert "hi" in str(scripted.requests[-1].messages[-1])


@pytest.mark.parametrize("question", ["confirm", "git"])
async def test_a_question_popping_up_over_typing_takes_none_of_its_keys(question: str, tmp_path: Path,
                                                                        clock: StoppedClock) -> None:
    from tui_agent.ui.screens.confirm import ConfirmScreen
    from tui_agent.ui.screens.git_question import GitQuestionScreen

    answers: list[object] = []
    app = PromptOnly()
    async with app.run_test(size=(80, 24)) as pilot:
        prompt = app.query_one(PromptArea)
        prompt.focus()
        await pilot.press(*"write a ")
        screen = ConfirmScreen("Prune tool x?", yes="Prune") if question == "confirm" else GitQuestionScreen(tmp_path)
        app.push_screen(screen, answers.append)
        await pilot.pause()
        await pilot.press(*"yes")  # answer keys of both questions (y), typed on
        await pilot.pause()
        assert app.screen is screen and answers == [] and prompt.text == "write a yes"
        clock.pause(TYPE_AHEAD_S + 0.2)
        await pilot.press("n")
        await pilot.pause()
        assert answers == [False] if question == "confirm" else answers == ["quit"]


async def test_a_question_over_an_empty_prompt_box_answers_at_once() -> None:
    from tui_agent.ui.screens.confirm import ConfirmScreen

    answers: list[bool | None] = []
    app = PromptOnly()
    async with app.run_test(size=(80, 24)) as pilot:
        prompt = app.query_one(PromptArea)
        prompt.focus()
        await pilot.press(*"/tools")  # typed, then the box emptied (sent): no typing goes on
        prompt.load_text("")
        app.push_screen(ConfirmScreen("Prune tool x?", yes="Prune"), answers.append)
        await pilot.pause()
        await pilot.press("y")
        await pilot.pause()
        assert answers == [True]
