"""Issue 36: MCP servers over streamable HTTP (`{"type": "http", "url": ...}`), tried with a real server from the
official SDK (MCPServer, FastMCP's name in mcp 2.x, run with transport="streamable-http" on 127.0.0.1 in a
subprocess) through `tuiagent -p`: its tools are offered and called, and a project's HTTP server is held until
approved, as a stdio server is."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fake_messages_api import FakeMessagesAPI, reply, text, tool_use
from tests.test_headless_mcp import lines_of, private_trust_store, tuiagent  # noqa: F401 (an autouse fixture)
from tests.test_mcp_client import cli
from tui_agent.core.mcp.config import McpConfigError, load_server_configs, parse_mcp_config
from tui_agent.core.mcp.trust import is_trusted
from tui_agent.core.project import Project

SERVER = '''
import sys
from pathlib import Path
from mcp.server.mcpserver import MCPServer

server = MCPServer("shouter")


@server.tool()
def shout(words: str) -> str:
    """Say the words louder."""
    with open(sys.argv[2], "a") as heard:
        heard.write(words + "\\n")
    return words.upper() + "!"


server.run(transport="streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
'''


class HttpServer:
    def __init__(self, url: str, heard: Path) -> None:
        self.url = url
        self.heard = heard

    def calls(self) -> list[str]:
        return self.heard.read_text().splitlines() if self.heard.exists() else []


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[HttpServer]:
    script, heard = tmp_path / "shouter.py", tmp_path / "heard.txt"
    script.write_text(SERVER)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen([sys.executable, str(script), str(port), str(heard)], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline and process.poll() is None, "the MCP server did not start"
                time.sleep(0.05)
        yield HttpServer(f"http://127.0.0.1:{port}/mcp", heard)
    finally:
        process.terminate()
        process.wait(10)


def test_an_http_server_from_mcp_config_is_called_through_a_headless_run(repo: Path, api: FakeMessagesAPI,
                                                                         http_server: HttpServer) -> None:
    config = json.dumps({"mcpServers": {"loud": {"type": "http", "url": http_server.url}}})
    api.enqueue(reply(tool_use("mcp__loud__shout", {"words": "over http"})), reply(text("done")))
    done = tuiagent(repo, "-p", "shout", "--output-format", "stream-json", "--mcp-config", config,
                    "--allowedTools", "mcp__loud__shout")
    assert done.returncode == 0, done.stderr
    lines = lines_of(done.stdout)
    assert {row["name"]: row["status"] for row in lines[0]["mcp_servers"]} == {"loud": "connected"}
    assert lines[-1]["tool_calls"][0]["name"] == "mcp__loud__shout" and not lines[-1]["tool_calls"][0]["is_error"]
    assert http_server.calls() == ["over http"]  # the server really ran the call
    answer = json.dumps(api.requests[1].messages[-1]["content"])
    assert "OVER HTTP!" in answer


def test_a_projects_http_server_waits_for_approval(repo: Path, api: FakeMessagesAPI, http_server: HttpServer) -> None:
    (repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"loud": {"type": "streamable-http",
                                                                         "url": http_server.url}}}))
    api.enqueue(reply(text("nothing to call")))
    held = tuiagent(repo, "-p", "hi", "--output-format", "stream-json")
    assert held.returncode == 0, held.stderr
    row = lines_of(held.stdout)[0]["mcp_servers"][0]
    assert row["status"] == "disabled" and http_server.url in row["error"], row
    assert "mcp__loud__shout" not in api.requests[0].tool_names and http_server.calls() == []
    approved = cli(repo, "mcp", "trust", "loud")
    assert approved.returncode == 0 and http_server.url in approved.stdout, approved
    api.enqueue(reply(tool_use("mcp__loud__shout", {"words": "approved"})), reply(text("done")))
    done = tuiagent(repo, "-p", "shout", "--output-format", "stream-json", "--allowedTools", "mcp__loud__shout")
    assert done.returncode == 0, done.stderr
    assert http_server.calls() == ["approved"]
    project = Project.at(repo)
    assert all(is_trusted(project, config) for config in load_server_configs(project)[0])
    for changed in ({"url": http_server.url + "/other"}, {"url": http_server.url, "headers": {"X-Key": "k"}}):
        (repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"loud": {"type": "http", **changed}}}))
        assert not any(is_trusted(project, config) for config in load_server_configs(project)[0]), changed


def test_bad_http_entries_get_a_clear_error() -> None:
    servers, problems = parse_mcp_config(json.dumps({"mcpServers": {
        "nourl": {"type": "http"}, "sse": {"type": "sse", "url": "http://127.0.0.1:1/sse"},
        "ftp": {"type": "http", "url": "ftp://x"}, "hdr": {"type": "http", "url": "http://x/mcp", "headers": {"A": 1}},
        "fine": {"url": "https://mcp.example.org/mcp", "headers": {"Authorization": "Bearer secret"}}}}))
    assert [server.name for server in servers] == ["fine"]
    assert servers[0].launch == "https://mcp.example.org/mcp (streamable HTTP with headers Authorization)"
    assert "secret" not in servers[0].launch
    text_of = "\n".join(problems)
    assert "server 'nourl' needs a \"url\" starting with http:// or https://" in text_of
    assert "server 'ftp' needs a \"url\"" in text_of and "'hdr': \"headers\" must map names to string values" in text_of
    assert "server 'sse' has type 'sse'" in text_of and "not SSE" in text_of
    with pytest.raises(McpConfigError):
        parse_mcp_config("{not json")
