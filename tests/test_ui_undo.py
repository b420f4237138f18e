"""In the app: approvals that learn a rule, /permissions, and /undo, /rewind, /diff over shell-made changes."""

from __future__ import annotations

import tomllib
from pathlib import Path

from tests.fake_messages_api import reply, text, tool_use
from tests.scripted_model import ScriptedModel
from tests.ui_support import SIZE, answer_confirm, make_app, ready, turn_answered, wait_until
from tests.test_ui_turn import send
from tui_agent.core.agent.permissions import ApprovalAnswer
from tui_agent.ui.screens.approval import ApprovalScreen, answer_choices
from tui_agent.ui.screens.confirm import ConfirmScreen
from tui_agent.ui.screens.pickers import ChoiceScreen
from tui_agent.core.runtime_state import agent_of, catalog_of


def test_the_modal_offers_rules_only_where_they_can_apply() -> None:
    shell = {choice.key: choice.answer for choice in answer_choices("shell", "run_shell", "pytest -q tests")}
    assert shell["y"] == ApprovalAnswer(True) and shell["n"] == ApprovalAnswer(False)
    assert shell["e"] == ApprovalAnswer(True, "run_shell(pytest -q tests)", "session")
    assert shell["P"] == ApprovalAnswer(True, "run_shell(pytest:*)", "project")
    assert shell["T"] == ApprovalAnswer(True, "run_shell", "project")
    assert [c.key for c in answer_choices("network", "run_shell", "curl x")] == ["y", "r", "n"]
    assert [c.key for c in answer_choices("write", "write_file", None)] == ["y", "t", "T", "r", "n"]
    assert [c.key for c in answer_choices("write", "write_file", None, protected=True)] == ["y", "r", "n"]


async def test_always_allow_a_prefix_for_the_project_then_remove_it(repo: Path, scripted: ScriptedModel) -> None:
    scripted.enqueue(reply(tool_use("run_shell", {"command": "echo one"})), reply(text("ok")),
                reply(tool_use("run_shell", {"command": "echo two && echo three"})), reply(text("ok again")))
    app = make_app(repo, client=scripted, sandbox_tier="rlimits")
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, app, "say one")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), timeout=60, message="the approval")
        assert "no network" in app.screen.summary
        await pilot.press("P")
        await wait_until(pilot, lambda: turn_answered(app, "ok"), timeout=60, message="the first turn")
        config = tomllib.loads((repo / ".agent" / "config.local.toml").read_text())  # the person's, git-ignored
        assert config["permissions"]["allow"] == ["run_shell(echo:*)"]
        assert not (repo / ".agent" / "config.toml").exists()  # the committed config is never written by an answer
        await send(pilot, app, "say two")  # covered by the rule: no modal
        await wait_until(pilot, lambda: turn_answered(app, "ok again"), timeout=60, message="the second turn")
        assert "three" in str(scripted.requests[-1].messages[-1])
        rule = app.runtime.core.permissions.rules()[0][0]
        await send(pilot, app, "/permissions")  # lists, never removes: a following Enter or prompt changes nothing
        await send(pilot, app, "/model")
        await pilot.pause(0.5)
        assert not isinstance(app.screen, (ChoiceScreen, ConfirmScreen)) and app.runtime.core.permissions.rules() == [(rule, "local")]
        assert any(entry.kind == "notice" and "/permissions remove" in entry.text for entry in app.conversation.entries)
        await send(pilot, app, "/permissions remove")
        await wait_until(pilot, lambda: isinstance(app.screen, ChoiceScreen), message="the rule picker", timeout=30)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), message="the question naming the rule", timeout=30)
        assert rule in str(app.screen.question) and ".agent/config.local.toml" in str(app.screen.question)
        await pilot.press("enter")  # the focused answer keeps it
        await wait_until(pilot, lambda: not isinstance(app.screen, ConfirmScreen), message="the question to close", timeout=30)
        assert app.runtime.core.permissions.rules() == [(rule, "local")]
        await send(pilot, app, f"/permissions remove {rule}")
        await answer_confirm(pilot)
        await wait_until(pilot, lambda: app.runtime.core.permissions.rules() == [], message="the rule removed", timeout=30)
        assert tomllib.loads((repo / ".agent" / "config.local.toml").read_text())["permissions"]["allow"] == []


async def test_undo_and_diff_cover_shell_made_changes_and_never_overwrite_the_users(repo: Path, scripted: ScriptedModel) -> None:
    scripted.enqueue(reply(tool_use("run_shell", {"command": "echo shell-made > app.py && echo new > extra.txt"})), reply(text("done")),
                reply(tool_use("write_file", {"path": "README.md", "content": "agent readme\n"})), reply(text("done")))
    original_app = (repo / "app.py").read_text()
    (repo / ".agent").mkdir()
    (repo / ".agent" / "config.toml").write_text('[permissions]\nallow = ["run_shell", "write_file"]\n')
    app = make_app(repo, client=scripted, sandbox_tier="rlimits")
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, app, "change things")
        await wait_until(pilot, lambda: turn_answered(app, "done"), timeout=60, message="the turn")
        await wait_until(pilot, lambda: app.diff_pane.subject == "turn", message="the turn's changes in the diff pane", timeout=30)
        assert "+shell-made" in app.diff_pane.diff_text and "extra.txt" in app.diff_pane.diff_text
        await send(pilot, app, "readme")
        await wait_until(pilot, lambda: turn_answered(app, "done", times=2), timeout=60, message="the second turn")
        (repo / "README.md").write_text("agent readme\nmy edit\n")
        await send(pilot, app, "/undo")
        await answer_confirm(pilot)
        await wait_until(pilot, lambda: app.diff_pane.subject == "undo-conflict", message="the conflict diff", timeout=30)
        assert "+my edit" in app.diff_pane.diff_text and (repo / "README.md").read_text().endswith("my edit\n")
        await send(pilot, app, "/diff 1")
        await wait_until(pilot, lambda: app.diff_pane.subject == "turn" and "shell-made" in app.diff_pane.diff_text, message="/diff 1", timeout=30)
        await send(pilot, app, "/rewind")
        await wait_until(pilot, lambda: isinstance(app.screen, ChoiceScreen), message="the turn picker", timeout=30)
        await pilot.press("down", "enter")  # newest first: pick turn 1
        await wait_until(pilot, lambda: not isinstance(app.screen, ChoiceScreen), message="the picker to close", timeout=30)
        await answer_confirm(pilot)
        await pilot.pause(0.3)
        assert (repo / "app.py").read_text() == "shell-made\n"  # stopped at turn 2: nothing changed
        (repo / "README.md").write_text("agent readme\n")  # the user drops their edit
        await send(pilot, app, "/rewind 1")
        await answer_confirm(pilot)
        await wait_until(pilot, lambda: (repo / "app.py").read_text() == original_app, message="the rewind", timeout=30)
        assert not (repo / "extra.txt").exists() and (repo / "README.md").read_text() == "# demo project\n"
        await wait_until(pilot, lambda: "the user undid your changes" in str(agent_of(app.runtime).messages[-1]), message="the model told", timeout=30)


async def test_undo_typed_during_a_turn_waits_for_it_then_undoes_it(repo: Path, scripted: ScriptedModel) -> None:
    scripted.enqueue(reply(tool_use("write_file", {"path": "README.md", "content": "agent readme\n"})))
    answered = scripted.hold(reply(text("done")))
    (repo / ".agent").mkdir()
    (repo / ".agent" / "config.toml").write_text('[permissions]\nallow = ["write_file"]\n')
    app = make_app(repo, client=scripted, sandbox_tier="rlimits")
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, app, "readme")
        await wait_until(pilot, lambda: (repo / "README.md").read_text() == "agent readme\n", timeout=60, message="the agent's write")
        assert app.turns.running
        await send(pilot, app, "/undo")  # the model is still answering: the undo is queued, not refused
        assert [item.text for item in app.turns.queue] == ["/undo"]
        answered.set()
        await answer_confirm(pilot, timeout=60)
        await wait_until(pilot, lambda: (repo / "README.md").read_text() == "# demo project\n", timeout=60, message="the undo after the turn")
        assert not app.turns.running and not app.turns.queue
        await wait_until(pilot, lambda: any(entry.kind == "notice" and entry.text.startswith("Undid turn") for entry in app.conversation.entries),
                         message="the undo's notice", timeout=30)


async def test_the_undo_question_shows_the_turns_diff_without_announcing_its_changes_again(repo: Path, scripted: ScriptedModel) -> None:
    scripted.enqueue(reply(tool_use("write_file", {"path": "notes.txt", "content": "hello\n"})), reply(text("done")))
    (repo / ".agent").mkdir()
    (repo / ".agent" / "config.toml").write_text('[permissions]\nallow = ["write_file"]\n')
    app = make_app(repo, client=scripted, sandbox_tier="rlimits")
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, app, "write notes")
        await wait_until(pilot, lambda: turn_answered(app, "done"), timeout=60, message="the turn")

        def announcements() -> int:
            return sum(1 for entry in app.conversation.entries if entry.kind == "notice" and "project file(s) in this turn" in entry.text)

        await wait_until(pilot, lambda: announcements() == 1, message="the turn's changes announced", timeout=30)
        app.diff_pane.show("something else", "", subject="other")
        await send(pilot, app, "/undo")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), message="the question", timeout=30)
        assert app.diff_pane.subject == "turn" and "+hello" in app.diff_pane.diff_text  # the diff under the question
        await pilot.press("n")
        await pilot.pause(0.3)
        assert announcements() == 1, [entry.text for entry in app.conversation.entries if entry.kind == "notice"]
        assert (repo / "notes.txt").exists()


async def test_the_undo_question_says_a_tool_changed_since_is_kept(repo: Path, scripted: ScriptedModel) -> None:
    from tests.catalog_support import tool_source

    scripted.enqueue(reply(tool_use("create_tool", {"name": "shout", "source": tool_source("shout")})), reply(text("made")))
    app = make_app(repo, client=scripted, sandbox_tier="rlimits")
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, app, "make a tool")
        await wait_until(pilot, lambda: turn_answered(app, "made"), timeout=60, message="the turn")
        (repo / ".agent" / "tools" / "shout.py").write_text(tool_source("shout", body="return 5 * x"))  # the person's
        await catalog_of(app.runtime).outside_edit({"shout"})
        await catalog_of(app.runtime).settle.flush()
        await send(pilot, app, "/undo")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), message="the question", timeout=30)
        question = str(app.screen.question)
        assert "tool shout (kept: changed after the agent wrote it)" in question and "pruned" not in question, question
        await pilot.press("n")


async def test_the_diff_pane_names_its_turn_and_undoing_a_turn_without_edits_says_so(repo: Path, scripted: ScriptedModel) -> None:
    scripted.enqueue(reply(tool_use("write_file", {"path": "notes.txt", "content": "hello\n"})), reply(text("done")),
                reply(text("just talking")), reply(text("still talking")))
    (repo / ".agent").mkdir()
    (repo / ".agent" / "config.toml").write_text('[permissions]\nallow = ["write_file"]\n')
    app = make_app(repo, client=scripted, sandbox_tier="rlimits")
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, app, "write notes")
        await wait_until(pilot, lambda: turn_answered(app, "done"), timeout=60, message="the turn")
        await wait_until(pilot, lambda: "+hello" in app.diff_pane.diff_text, message="the turn's diff", timeout=30)
        assert app.diff_pane.title.startswith("Turn 1's edits")
        for prompt, answer in (("and now?", "just talking"), ("and then?", "still talking")):
            await send(pilot, app, prompt)
            await wait_until(pilot, lambda answer=answer: turn_answered(app, answer), timeout=60, message="a turn")
        await pilot.pause(0.3)
        assert app.diff_pane.title.startswith("Turn 1's edits")  # not "this turn's": two turns without edits came since
        await send(pilot, app, "/undo")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), message="the question", timeout=30)
        question = str(app.screen.question)  # type: ignore[attr-defined]
        assert "turn 3" in question and "changed no project files" in question
        assert "files it changed are put back" not in question
        await pilot.press("n")
