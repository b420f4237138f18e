"""MCP sampling: a server built on the official `mcp` SDK asks the client's model (sampling/createMessage) from inside
a tool call; a headless tuiagent answers it with the session's model once approved, and declines it otherwise."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.fake_messages_api import FakeMessagesAPI, reply, text, tool_use
from tests.test_headless_mcp import lines_of, private_trust_store, tuiagent  # noqa: F401 (the fixture)

SERVER = '''
import mcp_types as types
from mcp.server.mcpserver import Context, MCPServer

app = MCPServer("sampler")


@app.tool()
async def ask(question: str, ctx: Context) -> str:
    """Ask the client's model."""
    result = await ctx.session.create_message(
        [types.SamplingMessage(role="user", content=types.TextContent(type="text", text=question))],
        max_tokens=50, system_prompt="Answer in one word.")
    return f"the model said: {result.content.text} ({result.stop_reason})"


app.run()
'''


def config(tmp_path: Path) -> str:
    script = tmp_path / "sampler.py"
    script.write_text(SERVER)
    return json.dumps({"mcpServers": {"sampler": {"command": sys.executable, "args": [str(script)]}}})


def test_an_approved_sampling_request_is_answered_by_the_sessions_model(repo: Path, tmp_path: Path,
                                                                          api: FakeMessagesAPI) -> None:
    api.enqueue(reply(tool_use("mcp__sampler__ask", {"question": "Colour of the sky?"})), reply(text("Blue")),
                reply(text("It is blue.")))
    done = tuiagent(repo, "-p", "ask", "--output-format", "stream-json", "--mcp-config", config(tmp_path), "--yes")
    assert done.returncode == 0, done.stderr
    lines = lines_of(done.stdout)
    assert lines[-1]["result"] == "It is blue." and lines[-1]["num_turns"] == 3  # the sampling request counts
    assert [line["message"]["content"][0]["type"] for line in lines if line["type"] == "assistant"] == ["tool_use", "text"]
    sampling = api.requests[1].body
    assert sampling["system"] == [{"type": "text", "text": "Answer in one word."}] and sampling["max_tokens"] == 50
    assert sampling["messages"] == [{"role": "user", "content": [{"type": "text", "text": "Colour of the sky?"}]}]
    result = api.requests[2].messages[-1]["content"][0]
    assert not result.get("is_error") and "the model said: Blue (endTurn)" in json.dumps(result["content"])


def test_a_sampling_request_nobody_approved_is_declined(repo: Path, tmp_path: Path, api: FakeMessagesAPI) -> None:
    api.enqueue(reply(tool_use("mcp__sampler__ask", {"question": "Colour of the sky?"})), reply(text("It refused.")))
    done = tuiagent(repo, "-p", "ask", "--output-format", "json", "--mcp-config", config(tmp_path),
                    "--allow", "mcp__sampler__ask")
    assert done.returncode == 0, done.stderr
    assert len(api.requests) == 2  # no sampling request reached the model
    result = api.requests[1].messages[-1]["content"][0]
    assert result["is_error"] and "declined" in json.dumps(result["content"])
