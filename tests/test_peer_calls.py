"""Calls from other agents count: catalog calls made through `tuiagent mcp serve` (by the official `mcp` client) and
through `tuiagent acp` (by the ACP Python SDK) show in `tools list`/`tools doctor` and feed the repeated-chain miner,
whose suggestion then reaches `tools suggest` and the agent's next request, as the TUI's own calls do."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from acp import text_block

from tests.acp_helpers import RecordingClient, acp_agent
from tests.catalog_support import tool_source
from tests.cli_in_process import run_in_process
from tests.fake_messages_api import FakeMessagesAPI, reply, text, tool_use
from tests.mcp_helpers import seed_catalog, served, text_of
from tui_agent.core.agent.sessions import list_sessions
from tui_agent.core.project import Project

STEM = '''"""File names."""


def stem(path: str) -> str:
    """The name of a file without its folder and extension.

    Args:
        path: A file path.
    """
    return path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
'''
SHOUT = '''"""Loud text."""


def shout(text: str) -> str:
    """The text in capitals.

    Args:
        text: What to shout.
    """
    return text.upper()
'''
NAMES = ("alpha", "bravo", "charlie")


def tools_cli(repo: Path, *args: str) -> dict | list:  # type: ignore[type-arg]
    """`tuiagent tools ... --json` (as a person would run it after the other agent's calls), in-process: the other
    agent's calls were made in processes of their own."""
    done = run_in_process("--project", str(repo), "tools", *args, "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def seed(repo: Path) -> None:
    asyncio.run(seed_catalog(repo, {"stem": STEM, "shout": SHOUT, "double": tool_source("double")}))


def never_called(repo: Path) -> set[str]:
    report = tools_cli(repo, "doctor")
    assert isinstance(report, dict)
    return {name for finding in report["findings"] if finding["kind"] == "never-called" for name in finding["tools"]}


def chain_suggestion(repo: Path) -> dict:  # type: ignore[type-arg]
    suggestions = tools_cli(repo, "suggest")
    assert isinstance(suggestions, list)
    [found] = [s for s in suggestions if s["chain"] == "stem → shout"]
    return found  # type: ignore[no-any-return]


def test_mcp_calls_count_in_the_doctor_and_feed_the_chain_miner(repo: Path, api: FakeMessagesAPI) -> None:
    seed(repo)
    assert never_called(repo) == {"stem", "shout", "double"}

    async def calls() -> None:
        async with served(repo) as (session, _notes, _init):
            for name in NAMES:
                named = await asyncio.wait_for(session.call_tool("stem", {"path": f"logs/{name}.log"}), 60)
                assert text_of(named) == name
                loud = await asyncio.wait_for(session.call_tool("shout", {"text": name}), 60)
                assert text_of(loud) == name.upper()
            refused = await session.call_tool("double", {"x": "not a number"})
            assert refused.is_error

    asyncio.run(calls())
    assert never_called(repo) == {"double"}  # a refused call (arguments off the schema) ran nothing
    usage = {record["name"]: record["calls"] for record in tools_cli(repo, "list")}  # type: ignore[union-attr]
    assert usage == {"stem": 3, "shout": 3, "double": 0}

    found = chain_suggestion(repo)
    assert found["count"] == 3 and found["sessions"][0].startswith("mcp-")
    assert found["parameters"] == [["0.path", "1.text"]]  # the file's name threads from stem into shout
    assert found["varied_values"] == [[f"logs/{name}.log" for name in NAMES]]
    assert "Repeated call chain stem → shout ran 3 times" in found["note"]
    assert list_sessions(Project.at(repo)) == []  # the person's sessions (--continue, the list) hold none of it

    api.enqueue(reply(text("Noted.")))  # the agent's next request carries the suggestion, once, as for TUI calls
    from tui_agent.cli import main

    assert main(["--project", str(repo), "-p", "hello"]) == 0
    assert f"suggestion {found['id']}" in json.dumps(api.requests[0].messages)


def test_acp_calls_count_and_feed_the_chain_miner(repo: Path, api: FakeMessagesAPI) -> None:
    seed(repo)
    for name in NAMES[:2]:
        api.enqueue(reply(tool_use("stem", {"path": f"src/{name}.py"})), reply(tool_use("shout", {"text": name})),
                    reply(text(f"{name} done.")))

    async def prompts() -> None:
        async with acp_agent(repo, RecordingClient("allow_once")) as agent:
            session = await asyncio.wait_for(agent.new_session(cwd=str(repo), mcp_servers=[]), 60)
            for name in NAMES[:2]:
                answer = await asyncio.wait_for(agent.prompt(session_id=session.session_id,
                                                             prompt=[text_block(f"do {name}")]), 90)
                assert answer.stop_reason == "end_turn"

    asyncio.run(prompts())
    assert never_called(repo) == {"double"}
    usage = {record["name"]: record["calls"] for record in tools_cli(repo, "list")}  # type: ignore[union-attr]
    assert usage == {"stem": 2, "shout": 2, "double": 0}
    found = chain_suggestion(repo)
    assert found["count"] == 2 and not found["sessions"][0].startswith("mcp-")  # the ACP session's own transcript


def test_an_unwritable_transcript_stops_recording_and_never_fails_a_call(repo: Path) -> None:
    from tui_agent.core.tending.peer_calls import PeerCallLog

    project = Project.at(repo)
    project.sessions_dir.mkdir(parents=True, exist_ok=True)
    (project.sessions_dir / "peers").write_text("a file where the folder would be")
    calls = PeerCallLog(project, "mcp")
    for _ in range(50):
        call_id = calls.started("stem", {"path": "a/b.py"})
        calls.finished(call_id, "stem", "b", is_error=False, duration_ms=1.0)
    assert calls.stopped and len(calls.log._unwritten) == 2  # the header and the first call only, not 100 records
