"""Each trigger kind fires its recipes through the real engine, sandbox, catalog and watchfiles; results are audited."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tests.gitrepo import git
from tests.recipes_helpers import COUNT_LINES, SHOUT, open_stack, recipe_text, wait_for, watching
from tui_agent.core.catalog.errors import PipelineError
from tui_agent.core.events import ToolCallFinished


async def test_command_recipe_calls_an_authored_tool(repo: Path) -> None:
    yell = recipe_text('on = "command"', 'tool = "shout"\nargs = { text = "{args}" }', description="shout the words")
    async with open_stack(repo, tools={"shout": SHOUT}, recipes={"yell": yell}) as stack:
        assert stack.engine.slash_commands() == [("yell", "shout the words")]
        runs = await stack.engine.run_command("yell", "  hello there ")
        assert [run.ok for run in runs] == [True]
        assert runs[0].detail["value"] == "HELLO THERE"
        finished = [event for event in stack.events if isinstance(event, ToolCallFinished)]
        assert finished and finished[0].name == "shout" and not finished[0].is_error
        assert stack.notices('recipe yell (command) ok: shout → "HELLO THERE"')
        assert stack.catalog.get("shout").calls == 1
        audit = [entry for entry in stack.engine.runlog.entries("yell")]
        assert len(audit) == 1 and audit[0]["ok"] and audit[0]["args"]["trigger"] == "command"
        assert audit[0]["args"]["args"] == {"text": "hello there"}
        assert stack.engine.get("yell").runs == 1
        with pytest.raises(PipelineError, match="no command recipe /nope"):
            await stack.engine.run_command("nope", "")


async def test_session_start_runs_prompt_and_tool_recipes_in_order(repo: Path) -> None:
    recipes = {
        "zz_greet": recipe_text('on = "session_start"', 'prompt = "Summarise what changed since yesterday"', extra="priority = -1"),
        "aa_count": recipe_text('on = "session_start"', 'tool = "count_lines"\nargs = { path = "app.py" }'),
        "bb_count": recipe_text('on = "session_start"', 'tool = "count_lines"\nargs = { path = "README.md" }'),
    }
    async with open_stack(repo, tools={"count_lines": COUNT_LINES}, recipes=recipes) as stack:
        runs = await stack.engine.session_started()
        assert [run.recipe for run in runs] == ["zz_greet", "aa_count", "bb_count"]  # priority, then name
        assert stack.prompts == ["Summarise what changed since yesterday"]
        assert [run.detail.get("value") for run in runs[1:]] == [1, 1]


async def test_prompt_action_without_agent_fails_clearly(repo: Path) -> None:
    async with open_stack(repo, recipes={"hi": recipe_text('on = "session_start"', 'prompt = "hi"')}) as stack:
        stack.engine.submit_prompt = None
        runs = await stack.engine.session_started()
        assert not runs[0].ok and "ANTHROPIC_API_KEY" in runs[0].summary
        assert stack.notices("recipe hi (session_start) failed")


async def test_tool_authored_fires_with_the_tool_name(repo: Path) -> None:
    on_new_tool = recipe_text('on = "tool_authored"', 'tool = "shout"\nargs = { text = "new tool {name}" }')
    async with open_stack(repo, tools={"shout": SHOUT}, recipes={"announce": on_new_tool}) as stack:
        await stack.catalog.save("count_lines", COUNT_LINES)
        await wait_for(lambda: stack.engine.runlog.entries("announce"))
        await stack.engine.idle()
        entries = stack.engine.runlog.entries("announce")
        assert [entry["value"] for entry in entries] == ['shout → "NEW TOOL COUNT_LINES"']
        stack.events.clear()
        await stack.catalog.call_tool("count_lines", {"path": "app.py"})  # a call is not an authoring
        await asyncio.sleep(0.2)
        await stack.engine.idle()
        assert len(stack.engine.runlog.entries("announce")) == 1


async def test_tool_drifted_hands_the_repair_prompt_to_the_agent(repo: Path) -> None:
    repair = recipe_text('on = "tool_drifted"', 'prompt = "Repair {name}: {repair}"')
    async with open_stack(repo, tools={"count_lines": COUNT_LINES}, recipes={"repair": repair}) as stack:
        future = stack.engine.tool_drifted("count_lines", "the diff, the failing test and the source")
        assert future is not None
        runs = await future
        assert [run.ok for run in runs] == [True]
        assert stack.prompts == ["Repair count_lines: the diff, the failing test and the source"]


async def test_file_changed_fires_through_watchfiles_with_debounce(repo: Path) -> None:
    lines = recipe_text('on = "file_changed"\npaths = ["src/**/*.py"]\ndebounce_ms = 300',
                        'tool = "count_lines"\nargs = { path = "{path}" }')
    async with open_stack(repo, tools={"count_lines": COUNT_LINES}, recipes={"lines": lines}) as stack:
        (repo / "src" / "pkg").mkdir(parents=True)
        async with watching(stack):
            target = repo / "src" / "pkg" / "mod.py"
            for count in range(1, 4):  # three quick saves: one run after the quiet period
                target.write_text("x = 1\n" * count)
                await asyncio.sleep(0.05)
            (repo / "notes.txt").write_text("not python\n")
            (repo / "lib.py").write_text("outside src\n")
            runs = await wait_for(lambda: stack.engine.runlog.entries("lines"))
            await asyncio.sleep(0.8)
            await stack.engine.idle()
        runs = stack.engine.runlog.entries("lines")
        assert len(runs) == 1, runs
        assert runs[0]["args"]["args"] == {"path": "src/pkg/mod.py"} and runs[0]["value"] == "count_lines → 3"
        assert runs[0]["args"]["trigger"] == "file_changed"


async def test_several_recipes_on_one_event_run_in_priority_then_name_order(repo: Path) -> None:
    def rule(debounce: int, priority: int) -> str:
        return recipe_text(f'on = "file_changed"\npaths = ["*.py"]\ndebounce_ms = {debounce}',
                           'tool = "count_lines"\nargs = { path = "{path}" }', extra=f"priority = {priority}")

    recipes = {"a_lint": rule(20, 10), "b_format": rule(400, 0), "c_check": rule(20, 10)}
    async with open_stack(repo, tools={"count_lines": COUNT_LINES}, recipes=recipes) as stack:
        async with watching(stack):
            (repo / "app.py").write_text("print('changed')\n")
            await wait_for(lambda: len(stack.engine.runlog.entries()) >= 3)
            await stack.engine.idle()
        order = [entry["label"] for entry in stack.engine.runlog.entries()]
        # b_format has the lowest priority value, so it runs first even though its debounce is the longest
        assert order == ["recipe b_format", "recipe a_lint", "recipe c_check"]


async def test_audit_log_and_run_counts_survive_a_new_engine(repo: Path) -> None:
    yell = recipe_text('on = "command"', 'tool = "shout"\nargs = { text = "{args}" }')
    async with open_stack(repo, tools={"shout": SHOUT}, recipes={"yell": yell}) as stack:
        await stack.engine.run_command("yell", "one")
        await stack.engine.run_command("yell", "two")
    async with open_stack(repo) as stack:
        record = stack.engine.get("yell")
        assert record.runs == 2 and record.failures == 0 and record.last_run
    lines = [json.loads(line) for file in (repo / ".agent" / "runs").glob("*.jsonl") for line in file.read_text().splitlines()]
    assert [line["label"] for line in lines if line["kind"] == "recipe"] == ["recipe yell", "recipe yell"]
    assert "runs/" in (repo / ".agent" / ".gitignore").read_text()
    assert git(repo, "status", "--porcelain", "--untracked-files=all", "--", ".agent/runs") == ""
