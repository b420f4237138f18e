"""The runtime's states are its structure (issue 22): a restricted runtime has no catalog, recipes or MCP part at all,
a ready one has a required agent, and the plain attribute names still read on every state."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import pytest

from tests.fake_messages_api import FakeMessagesAPI
from tests.hostile.repo import PING_SERVER, TOOL, hostile_repo
from tui_agent.core.agent.permissions import deny_all
from tui_agent.core.runtime import open_runtime
from tui_agent.core.runtime_state import (NoModel, Ready, Restricted, agent_of, catalog_of, recipes_of,
                                          sandbox_of)
from tui_agent.core.trust import check, grant
from tui_agent.core.project import Project
from tui_agent.core.runtime_state import mcp_of

def _field_names(cls: type) -> set[str]:
    return {field.name for field in dataclasses.fields(cls)}


def test_the_states_hold_only_their_own_parts() -> None:
    assert _field_names(Restricted) == {"core", "previews", "agent"}  # no catalog, recipes, MCP or watcher field
    assert _field_names(NoModel) == {"core", "workshop", "reason"}  # no agent field
    assert _field_names(Ready) == {"core", "workshop", "agent"}
    agent = next(field for field in dataclasses.fields(Ready) if field.name == "agent")
    assert agent.default is dataclasses.MISSING and agent.default_factory is dataclasses.MISSING  # required


@pytest.mark.usefixtures("untrusted_config")
async def test_an_untrusted_project_opens_as_a_restricted_state(tmp_path: Path, api: FakeMessagesAPI) -> None:
    server, tested = tmp_path / "server-ran", tmp_path / "tool-tested"
    repo = hostile_repo(tmp_path / "p", {
        ".agent/tools/greet.py": TOOL.format(marker=str(tested)),
        "server.py": PING_SERVER.format(marker=str(server)),
        ".mcp.json": json.dumps({"mcpServers": {"ping": {"command": sys.executable, "args": ["server.py"]}}}),
    })
    runtime = await open_runtime(repo, approve=deny_all, sandbox_tier="rlimits", watch=False,
                                 base_url=api.base_url, api_key="test-key")
    try:
        assert type(runtime) is Restricted and runtime is runtime
        assert catalog_of(runtime) is None and recipes_of(runtime) is None and mcp_of(runtime) is None
        assert not hasattr(runtime, "workshop")  # no watcher, no stores: nothing of the project runs
        assert catalog_of(runtime) is None and recipes_of(runtime) is None
        assert runtime.agent is not None and agent_of(runtime) is runtime.agent  # built-in tools only
        assert runtime.agent.catalog is None and runtime.agent.tool_providers == []
        assert sandbox_of(runtime) is runtime.core.sandbox is runtime.core.sandbox
        store = runtime.store("tool")
        assert store is not None and [(row.name, row.status) for row in store.items()] == [("greet", "untrusted")]
        assert runtime.core.session is runtime.core.session and runtime.core.session is not None
        assert runtime.core.problems is runtime.core.problems and any("restricted mode" in p for p in runtime.core.problems)
    finally:
        await runtime.aclose()
    assert not server.exists() and not tested.exists()


@pytest.mark.usefixtures("untrusted_config")
async def test_a_trusted_project_opens_ready_or_without_a_model(tmp_path: Path, api: FakeMessagesAPI,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    repo = hostile_repo(tmp_path / "p", {".agent/tools/greet.py": TOOL.format(marker=str(tmp_path / "tested"))})
    grant(Project.at(repo))
    assert check(Project.at(repo)).trusted
    runtime = await open_runtime(repo, approve=deny_all, sandbox_tier="rlimits", watch=False,
                                 base_url=api.base_url, api_key="test-key")
    try:
        assert type(runtime) is Ready and runtime.agent is agent_of(runtime)
        assert catalog_of(runtime) is catalog_of(runtime) is runtime.workshop.catalog is not None
        assert runtime.agent.catalog is catalog_of(runtime) and recipes_of(runtime) is not None
    finally:
        await runtime.aclose()
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    runtime = await open_runtime(repo, approve=deny_all, sandbox_tier="rlimits", watch=False)
    try:
        assert type(runtime) is NoModel and agent_of(runtime) is None and agent_of(runtime) is None
        assert runtime.reason == runtime.core.model_error and "No model is configured" in runtime.reason
        assert catalog_of(runtime) is not None and [tool.name for tool in catalog_of(runtime).tools()] == ["greet"]
    finally:
        await runtime.aclose()
