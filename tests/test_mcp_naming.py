"""MCP tool names: API-valid, namespaced, collision-free and stable (property-tested), and the config files."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, strategies as st

from tui_agent.core.catalog.names import name_problem
from tui_agent.core.mcp.config import load_serve_options, load_server_configs
from tui_agent.core.mcp.naming import API_NAME, assign_names
from tui_agent.core.project import Project

parts = st.text(min_size=1, max_size=80)


@given(st.lists(st.tuples(parts, parts), max_size=30))
def test_names_are_valid_distinct_and_stable(pairs: list[tuple[str, str]]) -> None:
    names = assign_names(pairs)
    assert set(names) == set(pairs)
    assert all(API_NAME.match(name) and name.isidentifier() for name in names.values())
    assert len(set(names.values())) == len(names)
    assert assign_names(reversed(pairs)) == names


def test_readable_when_possible_hashed_when_not() -> None:
    long_tool = "x" * 80
    names = assign_names([("time", "get_current_time"), ("my-server", "a.b"), ("my_server", "a_b"), ("t", long_tool)])
    assert names[("time", "get_current_time")] == "mcp__time__get_current_time"
    assert names[("my-server", "a.b")] != names[("my_server", "a_b")]  # both clean to mcp__my_server__a_b
    assert names[("my-server", "a.b")].startswith("mcp__my_server__a_b_")
    assert len(names[("t", long_tool)]) == 64 and names[("t", long_tool)].startswith("mcp__t__xxx")


def test_catalog_tools_cannot_take_the_mcp_namespace() -> None:
    assert "reserved" in (name_problem("mcp__time__get_current_time") or "")


def test_server_configs_from_both_files(tmp_path: Path) -> None:
    project = Project.at(tmp_path)
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {
        "time": {"command": "uvx", "args": ["mcp-server-time"], "env": {"TZ": "UTC"}},
        "web": {"type": "http", "url": "https://example.com/mcp"},
        "shadowed": {"command": "old"},
    }}))
    (tmp_path / ".agent").mkdir()
    (tmp_path / ".agent" / "config.toml").write_text(
        '[mcp.servers.shadowed]\ncommand = "new"\nargs = ["--flag"]\n[mcp.servers.nocommand]\nargs = []\n'
        '[mcp.serve]\nallow_writes = true\nallow = ["one"]\n')
    servers, problems = load_server_configs(project)
    by_name = {server.name: server for server in servers}
    assert by_name["time"].args == ("mcp-server-time",) and by_name["time"].env == {"TZ": "UTC"}
    assert by_name["shadowed"].command == "new" and by_name["shadowed"].args == ("--flag",)
    assert by_name["web"].url == "https://example.com/mcp" and not any("web" in p for p in problems)  # streamable HTTP
    assert any("nocommand" in p and "command" in p for p in problems)
    options = load_serve_options(project)
    assert options.allow_writes and not options.allow_network and options.allowed_tools == {"one"}
    assert options.refusal("other", writes=True, network=False) is None
    refusal = options.refusal("net", writes=False, network=True) or ""
    assert "--allow-network" in refusal and "allow_network = true" in refusal


def test_a_broken_mcp_json_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text("{not json")
    servers, problems = load_server_configs(Project.at(tmp_path))
    assert servers == [] and problems and problems[0].startswith(".mcp.json")
