"""Recipe lifecycle: the pipeline (validate, atomic write, commit, register), hot reload, broken files and tools, history,
revert, prune and restore — commits touch only `.agent/`, and the user's work stays byte-identical."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.gitrepo import git, user_state
from tests.recipes_helpers import COUNT_LINES, SHOUT, open_stack, recipe_text, wait_for, watching
from tui_agent.core.catalog.errors import PipelineError
from tui_agent.core.events import CatalogChanged, ToolAuthored

YELL = recipe_text('on = "command"', 'tool = "shout"\nargs = { text = "{args}" }', description="shout")
YELL_V2 = recipe_text('on = "command"', 'tool = "shout"\nargs = { text = "v2 {args}" }', description="shout louder")


def files_in_commit(repo: Path, rev: str = "HEAD") -> list[str]:
    return git(repo, "show", "--name-only", "--format=", rev).split()


def subjects(repo: Path) -> list[str]:
    return git(repo, "log", "--format=%s").splitlines()


async def test_pipeline_lifecycle_commits_only_agent_paths(dirty_repo: Path) -> None:
    repo = dirty_repo
    before = user_state(repo)
    async with open_stack(repo, tools={"shout": SHOUT}) as stack:
        engine = stack.engine
        record = await engine.save_recipe("yell", YELL)
        assert record.status == "ok" and record.commit
        assert subjects(repo)[0] == "tuiagent: add recipe yell"
        assert files_in_commit(repo) == [".agent/recipes/yell.toml"]
        assert any(isinstance(e, ToolAuthored) and e.kind == "recipe" and e.created for e in stack.events)
        assert any(isinstance(e, CatalogChanged) and e.names == ("yell",) for e in stack.events)

        await engine.save_recipe("yell", YELL_V2)
        assert subjects(repo)[0] == "tuiagent: update recipe yell"
        assert (await engine.run_command("yell", "x"))[0].detail["value"] == "V2 X"
        history = engine.store.history("yell")
        assert [entry.message for entry in history] == ["tuiagent: update recipe yell", "tuiagent: add recipe yell"]
        assert "+args = { text = \"v2 {args}\" }" in engine.store.diff("yell")

        change = await engine.revert("yell")
        assert subjects(repo)[0].startswith("tuiagent: revert recipe yell to ")
        assert stack.project.recipe_path("yell").read_text() == YELL and change.record.recipe.description == "shout"
        assert (await engine.run_command("yell", "x"))[0].detail["value"] == "X"

        await engine.revert("yell", history[0].rev)
        assert stack.project.recipe_path("yell").read_text() == YELL_V2

        await engine.prune("yell")
        assert subjects(repo)[0] == "tuiagent: prune recipe yell"
        assert not stack.project.recipe_path("yell").exists() and engine.get("yell") is None
        assert engine.slash_commands() == []

        await engine.restore("yell")
        assert subjects(repo)[0] == "tuiagent: restore recipe yell"
        assert stack.project.recipe_path("yell").read_text() == YELL_V2
        assert engine.slash_commands() == [("yell", "shout louder")]

        for rev in git(repo, "log", "--format=%H", "-7").split()[:6]:
            assert all(path.startswith(".agent/") for path in files_in_commit(repo, rev))
    assert user_state(repo) == before
    assert git(repo, "fsck", "--no-dangling").strip() == ""


async def test_invalid_recipe_changes_nothing(dirty_repo: Path) -> None:
    before = user_state(dirty_repo)
    async with open_stack(dirty_repo, tools={"shout": SHOUT}) as stack:
        head = git(dirty_repo, "rev-parse", "HEAD")
        with pytest.raises(PipelineError) as info:
            await stack.engine.save_recipe("yell", YELL.replace('on = "command"', 'on = "whenever"'))
        assert info.value.stage == "schema" and info.value.line == 4
        assert not stack.project.recipe_path("yell").exists()
        await stack.engine.save_recipe("yell", YELL)
        head = git(dirty_repo, "rev-parse", "HEAD")
        with pytest.raises(PipelineError):
            await stack.engine.save_recipe("yell", "description = \n")
        assert stack.project.recipe_path("yell").read_text() == YELL
        assert git(dirty_repo, "rev-parse", "HEAD") == head
        with pytest.raises(PipelineError, match="no earlier version"):
            await stack.engine.revert("yell")
        with pytest.raises(PipelineError, match="exists"):
            await stack.engine.restore("yell")
        with pytest.raises(PipelineError, match="no recipe nope"):
            await stack.engine.prune("nope")
    assert user_state(dirty_repo) == before


async def test_broken_recipe_file_never_disables_the_others(repo: Path) -> None:
    recipes = {
        "a_broken": 'description = "oops"\n[trigger\non = "command"\n',
        "b_bad_field": recipe_text('on = "sometimes"', 'prompt = "x"'),
        "c_missing_tool": recipe_text('on = "command"', 'tool = "not_there"'),
        "d_good": YELL,
        "e_disabled": recipe_text('on = "command"', 'prompt = "p"', extra="enabled = false"),
    }
    async with open_stack(repo, tools={"shout": SHOUT}, recipes=recipes) as stack:
        status = {record.name: record.status for record in stack.engine.records()}
        assert status == {"a_broken": "broken", "b_bad_field": "broken", "c_missing_tool": "broken", "d_good": "ok",
                          "e_disabled": "disabled"}
        broken = stack.engine.get("a_broken")
        assert broken.error.stage == "parse" and broken.error.line == 2 and broken.recipe is None
        assert stack.engine.get("b_bad_field").error.line == 4
        assert stack.engine.get("c_missing_tool").problems == ("requires tool not_there, which does not exist",)
        assert stack.engine.slash_commands() == [("d_good", "shout")]
        assert (await stack.engine.run_command("d_good", "still works"))[0].ok
        with pytest.raises(PipelineError, match="not_there, which does not exist"):
            await stack.engine.run_command("c_missing_tool", "")
        with pytest.raises(PipelineError, match="disabled"):
            await stack.engine.run_command("e_disabled", "")


async def test_required_tool_broken_or_missing_shows_and_heals(repo: Path) -> None:
    lines = recipe_text('on = "command"', 'tool = "count_lines"\nargs = { path = "app.py" }', extra='requires = ["shout"]')
    async with open_stack(repo, tools={"shout": SHOUT}, recipes={"lines": lines}) as stack:
        assert stack.engine.get("lines").status == "broken"
        await stack.catalog.save("count_lines", COUNT_LINES)
        assert stack.engine.get("lines").status == "ok"
        assert any(isinstance(e, CatalogChanged) and "lines" in e.names for e in stack.events)
        stack.project.tool_path("shout").write_text("def shout(:\n")  # a person breaks the tool in an editor
        await stack.catalog.outside_edit({"shout"})
        record = stack.engine.get("lines")
        assert record.status == "broken" and record.problems == ("requires tool shout, which is broken",)


async def test_outside_edits_hot_reload_and_commit(repo: Path) -> None:
    async with open_stack(repo, tools={"shout": SHOUT}, recipes={"yell": YELL}) as stack:
        engine = stack.engine
        async with watching(stack):
            stack.write_recipe("yell", YELL_V2)  # a person edits it in their editor
            await wait_for(lambda: engine.get("yell").description == "shout louder")
            await wait_for(lambda: subjects(repo)[0] == "tuiagent: update recipe yell (edited outside tuiagent)")
            stack.write_recipe("yell", "description = 'half typed\n")
            await wait_for(lambda: engine.get("yell").status == "broken")
            record = engine.get("yell")
            assert record.error.stage == "parse" and record.error.line == 1
            assert stack.notices("recipe yell is broken (line 1)") and stack.notices("last good version stays active")
            assert record.recipe.description == "shout louder"  # the last good version stays live
            assert (await engine.run_command("yell", "x"))[0].detail["value"] == "V2 X"
            stack.write_recipe("new_one", recipe_text('on = "command"', 'prompt = "hello {args}"'))
            await wait_for(lambda: engine.get("new_one") is not None)
            await wait_for(lambda: subjects(repo)[0] == "tuiagent: add recipe new_one (edited outside tuiagent)")
            stack.project.recipe_path("new_one").unlink()
            await wait_for(lambda: engine.get("new_one") is None)
            await wait_for(lambda: subjects(repo)[0].startswith("tuiagent: remove recipe new_one"))
            commits_before = len(subjects(repo))
            await engine.save_recipe("yell", YELL)  # own write: registered once, no second commit from the watcher
            await asyncio.sleep(0.8)
            assert len(subjects(repo)) == commits_before + 1
        assert engine.get("yell").status == "ok"
        await engine.restore("new_one")
        assert engine.get("new_one").status == "ok"
