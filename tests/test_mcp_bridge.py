"""The run_python request channel under hostile snippets: only offered names, object arguments, bounded calls, no network."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tui_agent.core.project import Project
from tui_agent.core.sandbox import Sandbox
from tui_agent.core.sandbox.process import MAX_CALLS_PER_RUN
from tui_agent.core.sandbox import Snippet


class RecordingBridge:
    """A runtime side that offers one tool, `echo`, and records what reached it."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def modules(self) -> dict[str, str]:
        return {"mcp__t__echo": "Echo the arguments back."}

    async def call(self, name: str, arguments: dict[str, Any]) -> Any:
        self.calls.append((name, arguments))
        if arguments.get("fail"):
            raise RuntimeError("the tool said no")
        return {"echo": arguments}


RAW_REQUEST = '''
import os, sys, json, stat
def _socket(number):
    try:
        return stat.S_ISSOCK(os.fstat(number).st_mode)
    except OSError:
        return False
# the run's private channel, found as hostile code would find it: the one socket among its descriptors
[fd] = [int(name) for name in os.listdir("/proc/self/fd") if name.isdigit() and _socket(int(name))]
def ask(line):
    os.write(fd, line)
    reply = b""
    while not reply.endswith(b"\\n"):
        reply += os.read(fd, 65536)
    return json.loads(reply)
'''


async def test_the_channel_refuses_what_is_not_offered(repo: Path) -> None:
    sandbox = await Sandbox.start(Project.at(repo), warm_workers=1)
    bridge = RecordingBridge()
    sandbox.bridge = bridge
    try:
        good = await sandbox.run(Snippet("from mcp__t__echo import mcp__t__echo\nmcp__t__echo(a=1, b=[2])"))
        failed = await sandbox.run(Snippet("from mcp__t__echo import mcp__t__echo, McpToolError\n"
                                          "try:\n    mcp__t__echo(fail=True)\nexcept McpToolError as e:\n    r = str(e)\nr"))
        unknown = await sandbox.run(Snippet("import mcp__t__other"))
        hostile = await sandbox.run(Snippet(RAW_REQUEST + (
            "[ask(b'{\"bridge\": {\"tool\": \"read_file\", \"arguments\": {}}}\\n'),"
            " ask(b'{\"bridge\": {\"tool\": \"mcp__t__echo\", \"arguments\": [1]}}\\n'),"
            " ask(b'{\"bridge\": not json\\n')]")))
        flood = await sandbox.run(Snippet(RAW_REQUEST + (
            f"[ask(b'{{\"bridge\": {{\"tool\": \"mcp__t__echo\", \"arguments\": {{}}}}}}\\n')['ok'] for _ in range({MAX_CALLS_PER_RUN + 5})]")))
        network = await sandbox.run(Snippet("import socket\ntry:\n    socket.socket(socket.AF_INET)\n    r = 'open'\n"
                                           "except OSError as e:\n    r = 'blocked'\nr"))
    finally:
        await sandbox.aclose()
    assert good.ok and good.value == {"echo": {"a": 1, "b": [2]}}
    assert failed.ok and failed.value == "the tool said no"
    assert not unknown.ok and "ModuleNotFoundError" in (unknown.error or "")
    assert hostile.ok, hostile.error
    assert [answer["ok"] for answer in hostile.value] == [False, False, False]
    assert "no MCP tool named 'read_file'" in hostile.value[0]["error"] and "JSON object" in hostile.value[1]["error"]
    assert flood.ok and flood.value.count(True) == MAX_CALLS_PER_RUN and flood.value[-1] is False
    assert ("mcp__t__echo", {"a": 1, "b": [2]}) in bridge.calls and all(name == "mcp__t__echo" for name, _ in bridge.calls)
    if sandbox.tier == "bubblewrap":
        assert network.value == "blocked"  # the sandbox keeps no network: calls cross through the runtime


async def test_without_a_bridge_nothing_is_importable(repo: Path) -> None:
    sandbox = await Sandbox.start(Project.at(repo), warm_workers=1)
    try:
        result = await sandbox.run(Snippet("import mcp__t__echo"))
    finally:
        await sandbox.aclose()
    assert not result.ok and "ModuleNotFoundError" in (result.error or "")
