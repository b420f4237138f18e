"""`acpx` (a headless ACP client from the npm registry, a second real client) runs one-shot prompts on `tuiagent acp`.

Needs Node.js with npm (CI installs Debian's nodejs and npm); skipped without it, or when npm cannot install acpx."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.acp_helpers import agent_command
from tests.fake_messages_api import FakeMessagesAPI, reply, text, tool_use

ACPX_VERSION = "0.19.1"
needs_node = pytest.mark.skipif(not (shutil.which("node") and shutil.which("npm")),
                                reason="Node.js with npm is not installed")


@pytest.fixture(scope="module")
def acpx(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("acpx")
    done = subprocess.run(["npm", "install", "--silent", "--no-audit", "--no-fund", "--prefix", str(folder),
                           f"acpx@{ACPX_VERSION}"], capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        pytest.skip(f"npm could not install acpx: {done.stderr.strip()[-300:]}")
    return folder / "node_modules" / "acpx" / "dist" / "cli.js"


def run_acpx(acpx: Path, repo: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(home)}  # acpx keeps its session records under ~/.acpx
    return subprocess.run(["node", str(acpx), "--agent", shlex.join(agent_command(repo)), "--cwd", str(repo), *args],
                          capture_output=True, text=True, timeout=120, env=env, cwd=str(repo))


def messages(stdout: str) -> list[dict[str, Any]]:
    """acpx's `--format json`: the JSON-RPC messages of the session, one a line."""
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


def updates(lines: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [line["params"]["update"] for line in lines if line.get("method") == "session/update"
            and line["params"]["update"]["sessionUpdate"] == kind]


@needs_node
def test_acpx_exec_runs_an_approved_edit(acpx: Path, repo: Path, tmp_path: Path, api: FakeMessagesAPI) -> None:
    api.enqueue(reply(text("Writing."), tool_use("write_file", {"path": "note.txt", "content": "from acpx\n"})),
                reply(text("The note is written.")))
    done = run_acpx(acpx, repo, tmp_path, "--approve-all", "--format", "json", "exec", "write a note")
    assert done.returncode == 0, done.stderr[-2000:]
    assert (repo / "note.txt").read_text() == "from acpx\n"
    lines = messages(done.stdout)
    assert {line["result"]["stopReason"] for line in lines if "stopReason" in line.get("result", {})} == {"end_turn"}
    [asked] = [line for line in lines if line.get("method") == "session/request_permission"]
    [call] = updates(lines, "tool_call")
    assert asked["params"]["toolCall"]["toolCallId"] == call["toolCallId"] and call["kind"] == "edit"
    running, finished = updates(lines, "tool_call_update")
    assert running == {"sessionUpdate": "tool_call_update", "toolCallId": call["toolCallId"], "status": "in_progress"}
    assert finished["status"] == "completed"
    assert {"type": "diff", "path": str(repo / "note.txt"), "newText": "from acpx\n"}.items() <= finished["content"][0].items()
    assert "".join(u["content"]["text"] for u in updates(lines, "agent_message_chunk")) == "Writing.The note is written."


@needs_node
def test_acpx_deny_all_leaves_the_project_untouched(acpx: Path, repo: Path, tmp_path: Path, api: FakeMessagesAPI) -> None:
    api.enqueue(reply(tool_use("run_shell", {"command": "touch canary.txt"})), reply(text("Refused.")))
    done = run_acpx(acpx, repo, tmp_path, "--deny-all", "--format", "json", "exec", "touch it")
    assert done.returncode == 5, done.stderr[-2000:]  # acpx's exit code for a denied permission
    assert not (repo / "canary.txt").exists()
    [finished] = updates(messages(done.stdout), "tool_call_update")
    assert finished["status"] == "failed" and "did not approve" in finished["content"][0]["content"]["text"]
