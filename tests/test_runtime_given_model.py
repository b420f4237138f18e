"""A model handed to the runtime (`open_runtime(client=)`, the UI's `LaunchOptions.client`) is the agent's: no Messages API
client is built, the SDK is not imported, and `--model` or the project's `model` setting still names it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.gitrepo import init_repo
from tui_agent.ui.launch import launch_options

ROOT = Path(__file__).resolve().parent.parent

OPEN_WITH_A_GIVEN_MODEL = """
import asyncio, sys
from tests.scripted_model import ScriptedModel
from tui_agent.core.agent.permissions import deny_all
from tui_agent.core.runtime import open_runtime
from tui_agent.core.runtime_state import agent_of

async def opened(named):
    model = ScriptedModel(model="in-process-model")
    runtime = await open_runtime(sys.argv[1], approve=deny_all, sandbox_tier="rlimits", watch=False, client=model, model=named)
    agent = agent_of(runtime)
    print(agent is not None and agent.client is model, agent.model if agent else "-", runtime.core.model)
    await runtime.aclose()

asyncio.run(opened(None))
asyncio.run(opened("claude-named-here"))
print("anthropic" in sys.modules)
"""


def test_a_given_model_is_the_agents_without_the_sdk_and_keeps_the_name_asked_for(tmp_path: Path) -> None:
    clean = {name: value for name, value in os.environ.items() if not name.startswith("ANTHROPIC_")}  # no model configured
    done = subprocess.run([sys.executable, "-c", OPEN_WITH_A_GIVEN_MODEL, str(init_repo(tmp_path / "repo"))], env=clean,
                          cwd=ROOT, capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.strip().splitlines()[-3:] == ["True in-process-model in-process-model",
                                                     "True claude-named-here claude-named-here", "False"], done.stdout


def test_the_cli_launch_options_hand_in_no_model() -> None:
    from tui_agent.cli import build_parser

    assert launch_options(build_parser().parse_args([])).client is None
