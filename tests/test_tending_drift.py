"""`drifted · failing`: a drifted tool whose own tests fail, in `tools list`, the prompt's index, live, and to recipes."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from tests.gitrepo import git
from tests.test_tending_cli import DATA_TOOL, cli
from tui_agent.core.agent.permissions import approve_all
from tui_agent.core.agent.system_prompt import catalog_entries, catalog_index, rank
from tui_agent.core.runtime import open_runtime
from tui_agent.core.runtime_state import catalog_of, recipes_of

REPAIR_RECIPE = '''description = "hand a drifted tool to the agent"
[trigger]
on = "tool_drifted"
[action]
prompt = "Repair {name}: {repair}"
'''


def greeting_repo(repo: Path) -> None:
    (repo / "greeting.txt").write_text("hello\n")
    (repo / ".agent" / "tools").mkdir(parents=True)
    (repo / ".agent" / "tools" / "greeting.py").write_text(DATA_TOOL)
    git(repo, "add", "greeting.txt")
    git(repo, "commit", "-q", "-m", "greeting")


def listed_status(capsys: pytest.CaptureFixture[str], repo: Path) -> str:
    code, out, err = cli(capsys, repo, "list", "--json")
    assert code == 0, err
    return {tool["name"]: tool["status"] for tool in json.loads(out)}["greeting"]


def test_tools_list_tells_drifted_from_drifted_and_failing(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    greeting_repo(repo)
    assert listed_status(capsys, repo) == "unused"
    (repo / "greeting.txt").write_text("hello\n\n")  # changed, the tool's test still passes
    assert listed_status(capsys, repo) == "drifted"
    (repo / "greeting.txt").write_text("good morning\n")
    assert listed_status(capsys, repo) == "drifted · failing"
    code, out, _ = cli(capsys, repo, "list")
    assert "drifted · failing" in out.splitlines()[1]
    (repo / "greeting.txt").write_text("hello\n")
    assert listed_status(capsys, repo) == "unused"


async def test_live_drift_reaches_the_status_the_prompt_index_and_tool_drifted_recipes(repo: Path) -> None:
    greeting_repo(repo)
    (repo / ".agent" / "recipes").mkdir()
    (repo / ".agent" / "recipes" / "repair.toml").write_text(REPAIR_RECIPE)
    prompts: list[str] = []

    async def submit(prompt: str, *args: object, **kwargs: object) -> None:
        prompts.append(prompt)

    runtime = await open_runtime(repo, approve=approve_all, submit_prompt=submit)
    try:
        await asyncio.sleep(0.3)  # the watcher is live
        catalog = catalog_of(runtime)
        assert catalog.get("greeting").status == "unused"
        (repo / "greeting.txt").write_text("good morning\n")
        started = time.monotonic()
        while catalog.get("greeting").status != "drifted · failing" and time.monotonic() - started < 10:
            await asyncio.sleep(0.05)
        assert catalog.get("greeting").status == "drifted · failing"
        assert time.monotonic() - started < 3.0  # about a second on an idle machine; slack for loaded CI
        index = catalog_index(rank(catalog_entries(catalog)), 2000)
        assert [line for line in index.splitlines() if line.startswith("- greeting:")][0].endswith("[drifted · failing]")
        await recipes_of(runtime).idle()
        while not prompts and time.monotonic() - started < 10:
            await asyncio.sleep(0.05)
        assert prompts and prompts[0].startswith("Repair greeting:") and "+good morning" in prompts[0]
    finally:
        await runtime.aclose()
