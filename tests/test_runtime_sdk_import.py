"""The model SDK (seconds of CPU to import) is imported only when a model is configured."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.gitrepo import init_repo

OPEN_AND_REPORT = """
import asyncio, sys
from tui_agent.core.agent.permissions import deny_all
from tui_agent.core.runtime import open_runtime

async def main():
    runtime = await open_runtime(sys.argv[1], approve=deny_all, sandbox_tier="rlimits", watch=False)
    print("agent" if runtime.agent is not None else "no agent", "anthropic" in sys.modules)
    await runtime.aclose()

asyncio.run(main())
"""


def _open(repo: Path, **env: str) -> str:
    clean = {name: value for name, value in os.environ.items() if not name.startswith("ANTHROPIC_")}
    done = subprocess.run([sys.executable, "-c", OPEN_AND_REPORT, str(repo)], env={**clean, **env},
                          capture_output=True, text=True, timeout=120, check=True)
    return done.stdout.strip().splitlines()[-1]


def test_without_a_model_the_sdk_is_never_imported(tmp_path: Path) -> None:
    assert _open(init_repo(tmp_path / "repo")) == "no agent False"


def test_with_a_model_configured_it_is(tmp_path: Path) -> None:
    assert _open(init_repo(tmp_path / "repo"), ANTHROPIC_API_KEY="test-key") == "agent True"
