"""`tuiagent mcp serve` driven by the official MCP SDK client over stdio: list, call, refuse, follow catalog changes."""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from pathlib import Path

from tests.cli_in_process import run_in_process
from tests.gitrepo import user_state
from tests.mcp_helpers import WRITER_SOURCE, seed_catalog, served, text_of, tool_source


def cli(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Another process changing the catalog: the `tuiagent tools` CLI in the same project, run in this test's process
    (the server is a process of its own)."""
    return run_in_process("--project", str(repo), *args)


async def names(session) -> list[str]:
    return sorted(tool.name for tool in (await session.list_tools()).tools)


async def test_lists_calls_and_refuses(dirty_repo: Path) -> None:
    await seed_catalog(dirty_repo, {"double": tool_source("double"), "write_note": WRITER_SOURCE})
    (dirty_repo / ".agent" / "tools" / "half_done.py").write_text(tool_source("half_done", "return x +"))
    before = user_state(dirty_repo)
    async with served(dirty_repo) as (session, _notes, initialized):
        assert initialized.capabilities.tools is not None and initialized.capabilities.tools.list_changed is True
        listed = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert sorted(listed) == ["double", "write_note"]  # not half_done (broken); run_python only behind --run-python
        never_good = await session.call_tool("half_done", {"x": 1})
        assert never_good.is_error and "[parse]" in text_of(never_good)
        assert listed["double"].input_schema["properties"]["x"]["type"] == "integer"
        assert listed["double"].description.startswith("Double")
        assert listed["write_note"].annotations.read_only_hint is False

        result = await session.call_tool("double", {"x": 21})
        assert not result.is_error and text_of(result) == "42"
        bad = await session.call_tool("double", {"y": 1})
        assert bad.is_error and "no argument(s) y" in text_of(bad)

        refused = await session.call_tool("write_note", {"text": "hi"})
        assert refused.is_error and "--allow-writes" in text_of(refused) and "[mcp.serve]" in text_of(refused)
        assert not (dirty_repo / "mcp-note.txt").exists()
        missing = await session.call_tool("run_python", {"code": "1"})
        assert missing.is_error and "--run-python" in text_of(missing)
    audit = [json.loads(line) for path in (dirty_repo / ".agent" / "runs").glob("*.jsonl") for line in path.read_text().splitlines()]
    assert any(record.get("label") == "tool double" and record.get("args") == {"x": 21} for record in audit)
    assert user_state(dirty_repo) == before


async def test_flags_allow_writes_and_run_python(repo: Path) -> None:
    await seed_catalog(repo, {"double": tool_source("double"), "write_note": WRITER_SOURCE})
    async with served(repo, "--allow-writes", "--run-python") as (session, _notes, _init):
        assert "run_python" in await names(session)
        written = await session.call_tool("write_note", {"text": "hello"})
        assert not written.is_error, text_of(written)
        assert (repo / "mcp-note.txt").read_text() == "hello"
        composed = await session.call_tool("run_python", {"code": "from double import double\n[double(x) for x in range(3)]"})
        assert not composed.is_error and json.loads(text_of(composed)) == [0, 2, 4]


async def test_config_rule_allows_one_tool(repo: Path) -> None:
    (repo / ".agent").mkdir(exist_ok=True)
    (repo / ".agent" / "config.toml").write_text('[mcp.serve]\nallow = ["write_note"]\n')
    await seed_catalog(repo, {"write_note": WRITER_SOURCE})
    async with served(repo) as (session, _notes, _init):
        written = await session.call_tool("write_note", {"text": "by rule"})
        assert not written.is_error, text_of(written)
    assert (repo / "mcp-note.txt").read_text() == "by rule"


async def test_catalog_changes_are_announced(repo: Path) -> None:
    await seed_catalog(repo, {"double": tool_source("double")})
    tools_dir = repo / ".agent" / "tools"
    async with served(repo) as (session, notes, _init):
        assert await names(session) == ["double"]
        await asyncio.sleep(0.5)  # the watcher is live well before this
        count = len(notes.list_changed)

        written = time.perf_counter()  # an editor (or another terminal's agent) adds a tool
        (tools_dir / "triple.py").write_text(tool_source("triple", "return 3 * x"))
        arrived = await notes.wait(count + 1)
        assert arrived - written < 3.0  # the 300 ms figure is measured by benchmarks/bench_mcp.py
        assert await names(session) == ["double", "triple"]
        assert text_of(await session.call_tool("triple", {"x": 2})) == "6"

        count = len(notes.list_changed)  # the file breaks while listed: no longer listed, calls get the pipeline error
        (tools_dir / "triple.py").write_text(tool_source("triple", "return 3 *"))
        await notes.wait(count + 1)
        assert await names(session) == ["double"]
        broken = await session.call_tool("triple", {"x": 2})
        assert broken.is_error and "[parse]" in text_of(broken) and "line" in text_of(broken)

        count = len(notes.list_changed)  # another process prunes, then restores, then reverts
        assert cli(repo, "tools", "prune", "double").returncode == 0
        await notes.wait(count + 1)
        assert "double" not in await names(session)
        count = len(notes.list_changed)
        assert cli(repo, "tools", "restore", "double").returncode == 0
        await notes.wait(count + 1)
        assert "double" in await names(session)

        count = len(notes.list_changed)
        (tools_dir / "double.py").write_text(tool_source("double", "return x + x + 0"))
        await notes.wait(count + 1)
        count = len(notes.list_changed)
        reverted = cli(repo, "tools", "revert", "double")
        assert reverted.returncode == 0, reverted.stderr
        await notes.wait(count + 1)
        assert text_of(await session.call_tool("double", {"x": 5})) == "10"

        while True:  # the revert's own announcements may still be arriving: wait until they are over
            settled = len(notes.list_changed)
            await asyncio.sleep(1.0)
            if len(notes.list_changed) == settled:
                break
        count = len(notes.list_changed)  # calls alone change nothing that is listed: no notification
        await session.call_tool("double", {"x": 1})
        await asyncio.sleep(0.5)
        assert len(notes.list_changed) == count


async def test_modern_protocol_clients_get_changes_on_a_listen_stream(repo: Path) -> None:
    """A 2026-07-28 client (the SDK's `Client`, auto-negotiated) hears of changes through subscriptions/listen."""
    from mcp import Client

    from tests.mcp_helpers import serve_parameters

    await seed_catalog(repo, {"double": tool_source("double")})
    async with Client(serve_parameters(repo), mode="auto") as client:
        assert client.protocol_version >= "2026"
        assert sorted(t.name for t in (await client.list_tools()).tools) == ["double"]
        async with client.listen(tools_list_changed=True) as subscription:
            await asyncio.sleep(0.5)
            (repo / ".agent" / "tools" / "triple.py").write_text(tool_source("triple", "return 3 * x"))
            event = await asyncio.wait_for(anext(aiter(subscription)), 20)
        assert "ToolsListChanged" in type(event).__name__
        assert sorted(t.name for t in (await client.list_tools()).tools) == ["double", "triple"]
