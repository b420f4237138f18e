"""`tuiagent mcp serve` under clients written elsewhere: the official TypeScript SDK client (re-listing on every
notification) and MCP Inspector's CLI. Both need Node.js (CI installs Debian's nodejs and npm); skipped without it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.mcp_helpers import WRITER_SOURCE, seed_catalog, tool_source

NODE_SCRIPT = Path(__file__).parent / "node" / "relist_client.mjs"
# exact releases: what a newer one lists or prints is not this project's to follow (the ones the tests were written against)
TYPESCRIPT_SDK = "@modelcontextprotocol/sdk@1.32.2"
INSPECTOR = "@modelcontextprotocol/inspector@0.15.0"
needs_node = pytest.mark.skipif(not (shutil.which("node") and shutil.which("npm") and shutil.which("npx")),
                                reason="Node.js with npm and npx is not installed")


@pytest.fixture(scope="session")
def typescript_sdk(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The official TypeScript MCP SDK from the npm registry, in a folder of this test session."""
    folder = tmp_path_factory.mktemp("ts-sdk")
    done = subprocess.run(["npm", "install", "--silent", "--no-audit", "--no-fund", "--prefix", str(folder),
                           TYPESCRIPT_SDK], capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        pytest.skip(f"npm could not install @modelcontextprotocol/sdk: {done.stderr.strip()[-300:]}")
    return folder / "node_modules" / "@modelcontextprotocol" / "sdk"


@pytest.fixture(scope="session")
def inspector_command() -> str:
    """MCP Inspector's command, fetched by npx once a session (npx asks the registry again at every start)."""
    done = subprocess.run(["npx", "-y", "-p", INSPECTOR, "-c", "command -v mcp-inspector"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip(), done.stderr[-2000:]
    return done.stdout.strip()


def inspector(command: str, repo: Path, *args: str) -> dict:
    """`mcp-inspector --cli <tuiagent mcp serve> ...` (@modelcontextprotocol/inspector), its JSON answer."""
    done = subprocess.run([command, "--cli", sys.executable, "-m", "tui_agent.cli",
                           "--project", str(repo), "mcp", "serve", *args], cwd=repo, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


@needs_node
@pytest.mark.timeout(400)
async def test_typescript_client_that_relists_hears_one_notification_per_save(repo: Path, typescript_sdk: Path) -> None:
    await seed_catalog(repo, {"double": tool_source("double")})
    done = subprocess.run(["node", str(NODE_SCRIPT), str(typescript_sdk), sys.executable, str(repo), "20"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["notifications"] == 20 and report["lists"] == 20
    assert report["result"]["structuredContent"] == {"result": 22} and report["result"]["isError"] is False


@needs_node
@pytest.mark.timeout(400)
async def test_inspector_cli_lists_and_calls(repo: Path, inspector_command: str) -> None:
    await seed_catalog(repo, {"double": tool_source("double"), "write_note": WRITER_SOURCE})
    tools = {tool["name"]: tool for tool in inspector(inspector_command, repo, "--method", "tools/list")["tools"]}
    assert tools["double"]["inputSchema"]["additionalProperties"] is False and tools["double"]["title"] == "Double"
    assert tools["double"]["outputSchema"]["properties"]["result"] == {"type": "integer"}
    assert tools["write_note"]["annotations"]["destructiveHint"] is True
    called = inspector(inspector_command, repo, "--method", "tools/call", "--tool-name", "double", "--tool-arg", "x=21")
    assert called["structuredContent"] == {"result": 42} and called["content"][0]["text"] == "42"
    refused = inspector(inspector_command, repo, "--method", "tools/call", "--tool-name", "write_note", "--tool-arg", "text=hi")
    assert refused["isError"] is True and "--allow-writes" in refused["content"][0]["text"]
