"""One name check for every tool and recipe name from a person or a model: never a path, ASCII, at most 64 characters, a valid API tool name."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.agent_helpers import agent_runtime, of_type, run_turn
from tests.fake_messages_api import FakeMessagesAPI, reply, text, tool_use
from tui_agent.core.catalog.names import lookup_problem, name_problem
from tui_agent.core.events import ToolCallFinished
from tui_agent.core.project import Project
from tui_agent.core.recipes.recipefile import recipe_name_problem

API_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
HOSTILE = ["../../../o/lib", "..", ".", "/etc/passwd", "a/b", "a\\b", "é", "ｆｏｏ", "a" * 65, "", "x\n", "x\0", " x",
           "tool.py", ".hidden", "a..b", "$(rm -rf ~)"]


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_names_are_refused_with_a_reason_for_tools_and_recipes(name: str) -> None:
    for problem in (lookup_problem(name), name_problem(name), recipe_name_problem(name)):
        assert problem and (repr(name) in problem or "empty" in problem or "longer than 64" in problem), problem


@settings(max_examples=400, deadline=None)
@given(st.text(max_size=80))
def test_every_accepted_name_is_an_api_tool_name_and_stays_in_its_folder(name: str) -> None:
    project = Project.at("/tmp/project")
    for problem, path in ((lookup_problem(name), "tools"), (name_problem(name), "tools"), (recipe_name_problem(name), "recipes")):
        if problem is None:
            assert API_NAME.match(name)
            target = project.tool_path(name) if path == "tools" else project.recipe_path(name)
            assert target.parent == project.agent_dir / path


CLI_COMMANDS = [("tools", "prune"), ("tools", "revert"), ("tools", "restore"), ("tools", "history"), ("tools", "diff"),
                ("tools", "show"), ("tools", "run"), ("tools", "drift"), ("recipes", "prune"), ("recipes", "revert"),
                ("recipes", "restore"), ("recipes", "history"), ("recipes", "diff"), ("recipes", "show"), ("recipes", "run")]


@pytest.mark.parametrize("group,action", CLI_COMMANDS, ids=[" ".join(c) for c in CLI_COMMANDS])
def test_every_command_refuses_a_path_as_a_name_and_touches_nothing(repo: Path, tmp_path: Path, group: str, action: str) -> None:
    victim = tmp_path / "o" / "lib.py"
    victim.parent.mkdir()
    victim.write_text("precious\n")
    before = os.stat(victim)
    done = subprocess.run([sys.executable, "-m", "tui_agent.cli", "--project", str(repo), group, action, "../../../o/lib"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"tuiagent {group} {action}: '../../../o/lib' is not a {group[:-1]} name but a path" in done.stderr
    after = os.stat(victim)
    assert victim.read_text() == "precious\n" and (after.st_ino, after.st_mode, after.st_mtime_ns) == (before.st_ino, before.st_mode, before.st_mtime_ns)
    assert not (repo / ".agent").exists()  # refused before anything was opened


async def test_the_built_in_tools_refuse_a_path_as_a_name(repo: Path, tmp_path: Path) -> None:
    calls = [tool_use("prune_tool", {"name": "../../../o/lib"}), tool_use("create_tool", {"name": "../x", "source": "x"}),
             tool_use("call_tool", {"name": "a/b", "args": {}}), tool_use("create_recipe", {"name": "../r", "source": "x"})]
    with FakeMessagesAPI() as api:
        api.enqueue(reply(*calls), reply(text("done")))
        async with agent_runtime(repo, api) as runtime:
            events = await run_turn(runtime, "go")
    finished = of_type(events, ToolCallFinished)
    assert len(finished) == 4 and all(f.is_error and "is not a" in f.result and "but a path" in f.result for f in finished)
