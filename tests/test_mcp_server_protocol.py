"""`tuiagent mcp serve` under protocol stress: re-listing clients, cancelled calls, malformed lines, output schemas."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import mcp_types as types
import pytest
from mcp import ClientSession
from mcp.client.stdio import stdio_client

from tests.catalog_support import wait_for
from tests.mcp_helpers import WRITER_SOURCE, seed_catalog, serve_parameters, served, text_of, tool_source
from tests.test_mcp_client import server_pid, sleeping_under

NAP_SOURCE = '''"""Sleep a while."""

import time


def nap(seconds: float) -> str:
    """Sleep, then say so.

    Args:
        seconds: how long to sleep
    """
    time.sleep(seconds)
    return "awake"
'''

FETCH_SOURCE = '''"""Fetch a page."""

NETWORK = True


def fetch_page(url: str) -> dict[str, int]:
    """Pretend to fetch a page.

    Args:
        url: the address
    """
    return {"length": len(url)}
'''


def audit_records(repo: Path) -> list[dict[str, object]]:
    return [json.loads(line) for path in sorted((repo / ".agent" / "runs").glob("*.jsonl"))
            for line in path.read_text().splitlines() if line.strip()]


@pytest.mark.timeout(600)
async def test_one_notification_per_change_for_a_client_that_relists_on_each(repo: Path) -> None:
    """The client re-lists on every notification (what clients do): 30 saves give exactly 30 notifications (a
    notification per session or per request, the bug this guards against, multiplies them from the first save)."""
    await seed_catalog(repo, {"double": tool_source("double")})
    tools_dir = repo / ".agent" / "tools"
    arrived: list[float] = []
    relists: list[asyncio.Task[types.ListToolsResult]] = []
    session_box: list[ClientSession] = []
    event = asyncio.Event()

    async def on_message(message: object) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            arrived.append(time.perf_counter())
            relists.append(asyncio.get_running_loop().create_task(session_box[0].list_tools()))
            event.set()

    async with stdio_client(serve_parameters(repo)) as (read, write):
        async with ClientSession(read, write, message_handler=on_message) as session:
            session_box.append(session)
            await asyncio.wait_for(session.initialize(), 60)
            for _ in range(3):
                await session.list_tools()
            await asyncio.sleep(0.5)
            assert arrived == []
            for save in range(1, 31):
                (tools_dir / "double.py").write_text(tool_source("double", f"return 2 * x + {save}"))
                deadline = time.monotonic() + 30
                while len(arrived) < save:
                    event.clear()
                    assert time.monotonic() < deadline, f"save {save}: {len(arrived)} notifications"
                    try:
                        await asyncio.wait_for(event.wait(), 1)
                    except asyncio.TimeoutError:
                        pass
                await asyncio.gather(*relists)  # the client has re-listed before the next save
            await asyncio.sleep(2.0)  # anything late would arrive now
            assert len(arrived) == 30
            assert text_of(await session.call_tool("double", {"x": 1})) == "32"


async def test_a_cancelled_call_ends_is_audited_and_the_next_call_is_prompt(repo: Path) -> None:
    await seed_catalog(repo, {"nap": NAP_SOURCE})
    async with served(repo) as (session, _notes, _init):
        warm = time.perf_counter()
        assert text_of(await session.call_tool("nap", {"seconds": 0})) == "awake"
        normal = time.perf_counter() - warm

        server = server_pid(str(repo))
        assert not sleeping_under(server)  # so what is waited for below is the call
        task = asyncio.get_running_loop().create_task(session.call_tool("nap", {"seconds": 60}))
        await wait_for(lambda: sleeping_under(server), 60)  # it is running in the sandbox now
        cancelled_at = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        while not any(r.get("label") == "tool nap" and r.get("error_kind") == "cancelled" for r in audit_records(repo)):
            assert time.monotonic() - cancelled_at < 1.0, "the cancelled run was not ended and audited within 1 s"
            await asyncio.sleep(0.05)

        again = time.perf_counter()
        assert text_of(await session.call_tool("nap", {"seconds": 0})) == "awake"
        assert time.perf_counter() - again < max(3.0, 3 * normal)


async def test_malformed_lines_get_json_rpc_errors(repo: Path) -> None:
    """A line that is not JSON gets -32700 (id null); JSON that is not a JSON-RPC message gets -32600."""
    process = await asyncio.create_subprocess_exec(
        serve_parameters(repo).command, *serve_parameters(repo).args, cwd=str(repo), env=serve_parameters(repo).env,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
    assert process.stdin is not None and process.stdout is not None
    try:
        process.stdin.write(b'{"jsonrpc": "2.0", "id": 1, "method": \n')
        process.stdin.write(b'{"jsonrpc": "2.0", "id": 2, "nonsense": true}\n')
        await process.stdin.drain()
        first = json.loads(await asyncio.wait_for(process.stdout.readline(), 60))
        second = json.loads(await asyncio.wait_for(process.stdout.readline(), 60))
        assert first["jsonrpc"] == "2.0" and first["id"] is None and first["error"]["code"] == -32700
        assert second["id"] is None and second["error"]["code"] == -32600
        initialize = {"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}
        process.stdin.write(json.dumps(initialize).encode() + b"\n")
        await process.stdin.drain()
        answer = json.loads(await asyncio.wait_for(process.stdout.readline(), 60))
        assert answer["id"] == 3 and "result" in answer  # the server goes on serving
    finally:
        process.stdin.close()
        await asyncio.wait_for(process.wait(), 30)


async def test_tool_definitions_carry_schemas_titles_and_hints(repo: Path) -> None:
    await seed_catalog(repo, {"double": tool_source("double"), "write_note": WRITER_SOURCE, "fetch_page": FETCH_SOURCE,
                              "liar": tool_source("liar", 'return "not a number"')})
    async with served(repo, "--allow-network") as (session, _notes, _init):
        listed = {tool.name: tool for tool in (await session.list_tools()).tools}
        double, writer, fetch = listed["double"], listed["write_note"], listed["fetch_page"]
        for tool in listed.values():
            assert tool.input_schema.get("additionalProperties") is False
            assert tool.title and tool.annotations is not None and tool.annotations.title == tool.title
        assert double.title == "Double"
        assert double.annotations.read_only_hint is True and double.annotations.open_world_hint is False
        assert writer.annotations.read_only_hint is False and writer.annotations.destructive_hint is True
        assert writer.annotations.open_world_hint is False
        assert fetch.annotations.open_world_hint is True and fetch.annotations.read_only_hint is True

        # a return type JSON can describe: outputSchema, and structuredContent the client validates against it
        assert double.output_schema == {"type": "object", "properties": {"result": {"type": "integer"}},
                                        "required": ["result"], "x-fastmcp-wrap-result": True}
        result = await session.call_tool("double", {"x": 21})
        assert result.structured_content == {"result": 42} and text_of(result) == "42"
        assert fetch.output_schema is not None and fetch.output_schema["properties"]["result"]["type"] == "object"
        fetched = await session.call_tool("fetch_page", {"url": "abc"})
        assert fetched.structured_content == {"result": {"length": 3}}
        failed = await session.call_tool("double", {"x": "no"})
        assert failed.is_error and failed.structured_content is None
        lied = await session.call_tool("liar", {"x": 1})  # a schema promises structured content: a broken promise is an error
        assert lied.is_error and "does not match its return annotation" in text_of(lied)
        assert writer.output_schema["properties"]["result"] == {"type": "string"}
