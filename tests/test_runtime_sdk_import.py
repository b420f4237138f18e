"""The model SDK (seconds of CPU to import) is imported only when a model is configured; a one-shot prompt and the CLI
load only what they use."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.fake_messages_api import FakeMessagesAPI, reply, text
from tests.gitrepo import init_repo

OPEN_AND_REPORT = """
import asyncio, sys
from tui_agent.core.agent.permissions import deny_all
from tui_agent.core.runtime import open_runtime
from tui_agent.core.runtime_state import agent_of

async def main():
    runtime = await open_runtime(sys.argv[1], approve=deny_all, sandbox_tier="rlimits", watch=False)
    print("agent" if agent_of(runtime) is not None else "no agent", "anthropic" in sys.modules)
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


BEFORE_THE_FIRST_REQUEST = """
import json, sys
port, out = int(sys.argv[1]), sys.argv[2]

def at_first_connect(event, args):  # the modules loaded when the first request's connection to the server opens
    if event == "socket.connect" and isinstance(args[1], tuple) and args[1][1:2] == (port,) and not at_first_connect.done:
        at_first_connect.done = True
        with open(out, "w") as file:
            json.dump(sorted(list(sys.modules)), file)

at_first_connect.done = False
sys.addaudithook(at_first_connect)
from tui_agent.cli import main
sys.exit(main(sys.argv[3:]))
"""

NOT_FOR_A_ONE_SHOT_PROMPT = ("watchfiles", "mcp", "tui_agent.core.mcp.agent_tools", "tomlkit", "pathspec",
                             "tui_agent.core.tending.care", "tui_agent.core.tending.doctor", "filelock")
"""What `tuiagent -p` never needs before its first request: it runs no project watcher, has no MCP server here (so
no MCP tools), writes no permission rule (tomlkit only writes them) nor shared state file (filelock, ~60 ms of imports, only
locks a change of one), has searched nothing (pathspec is the search
tools' walk when `rg` is missing), and the catalog doctor is a `tuiagent tools` command."""


def _modules_at_first_request(repo: Path, api: FakeMessagesAPI, tmp_path: Path, *, env: dict[str, str]) -> set[str]:
    api.enqueue(reply(text("hello")))
    out = tmp_path / "modules.json"
    port = str(urlsplit(api.base_url).port)
    done = subprocess.run([sys.executable, "-c", BEFORE_THE_FIRST_REQUEST, port, str(out), "--project", str(repo), "-p", "hi"],
                          env={**os.environ, **env}, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout == "hello\n", done.stderr
    return set(json.loads(out.read_text()))


def _loaded(modules: set[str], names: Iterable[str]) -> list[str]:
    return [name for name in names if name in modules or any(m.startswith(name + ".") for m in modules)]


def test_a_one_shot_prompt_loads_no_watcher_nor_tending_before_its_first_request(repo: Path, api: FakeMessagesAPI,
                                                                                 tmp_path: Path) -> None:
    modules = _modules_at_first_request(repo, api, tmp_path, env={})  # a trusted project (tests/conftest.py)
    assert "tui_agent.core.catalog.api" in modules and "anthropic" in modules  # the probe saw a real start-up
    assert _loaded(modules, NOT_FOR_A_ONE_SHOT_PROMPT) == []


def test_a_restricted_one_shot_prompt_loads_no_catalog_recipes_or_tending(repo: Path, api: FakeMessagesAPI,
                                                                          tmp_path: Path) -> None:
    """An untrusted project opens restricted: no catalog, recipes or suggestions, so none of their code is loaded
    (the agent's `create_recipe` text comes from `recipes.formathelp`, which does not import the engine)."""
    modules = _modules_at_first_request(repo, api, tmp_path, env={"XDG_CONFIG_HOME": str(tmp_path / "no-trust")})
    assert "tui_agent.core.runtime_restricted" in modules and "tui_agent.core.recipes.formathelp" in modules
    assert _loaded(modules, (*NOT_FOR_A_ONE_SHOT_PROMPT, "tui_agent.core.tending", "tui_agent.core.catalog.startup",
                             "tui_agent.core.catalog.api", "tui_agent.core.recipes.engine", "tui_agent.core.recipes.api")) == []


def test_loading_the_cli_loads_no_catalog_tending_or_git() -> None:
    """Every `tuiagent` start (the TUI's too) loads the CLI: its command groups import their core code when they run."""
    probe = "import json, sys, tui_agent.cli; print(json.dumps(sorted(sys.modules)))"
    modules = set(json.loads(subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout))
    assert "tui_agent.commands.tools" in modules
    assert _loaded(modules, ("git", "anthropic", "watchfiles", "tui_agent.core.catalog", "tui_agent.core.tending",
                             "tui_agent.core.recipes", "tui_agent.core.sandbox", "tui_agent.core.versioning.hookhold")) == []


def test_the_system_line_is_known_when_the_runtime_opens(tmp_path: Path) -> None:
    """`platform.platform()` runs `uname -p` (tens of ms): it is made in a thread while the SDK imports, so the first
    request does not wait for it."""
    script = OPEN_AND_REPORT.replace('print("agent" if', 'from tui_agent.core.agent.instructions import system_line\n'
                                     '    print(system_line.cache_info().currsize)\n    print("agent" if')
    clean = {name: value for name, value in os.environ.items() if not name.startswith("ANTHROPIC_")}
    done = subprocess.run([sys.executable, "-c", script, str(init_repo(tmp_path / "repo"))],
                          env={**clean, "ANTHROPIC_API_KEY": "test-key"}, capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.strip().splitlines()[-2:] == ["1", "agent True"]


async def test_undo_opens_while_the_sdk_imports(repo: Path, api: FakeMessagesAPI, monkeypatch: pytest.MonkeyPatch) -> None:
    """Undo's opening (GitPython, git) runs while the SDK imports, not between the import and the first request: the
    import is held here until undo has opened, which must not wait for it."""
    import threading

    from tui_agent.core import runtime
    from tui_agent.core.agent.permissions import deny_all
    from tui_agent.core.runtime_state import agent_of

    undo_opened = threading.Event()
    real_open_undo, real_load_sdk = runtime.open_undo, runtime.load_sdk

    def open_undo(*args: Any) -> Any:
        try:
            return real_open_undo(*args)
        finally:
            undo_opened.set()

    def load_sdk(model: str | None) -> str:
        assert undo_opened.wait(20), "undo waited for the SDK's import"
        return real_load_sdk(model)

    monkeypatch.setattr(runtime, "open_undo", open_undo)
    monkeypatch.setattr(runtime, "load_sdk", load_sdk)
    opened = await runtime.open_runtime(repo, approve=deny_all, sandbox_tier="rlimits", watch=False)
    try:
        assert agent_of(opened) is not None and opened.core.undo is not None
    finally:
        await opened.aclose()
