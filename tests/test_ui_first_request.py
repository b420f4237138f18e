"""Start-up chores wait while a prompt typed during the opening is on its way: until the model server answered it,
at most WAIT_AT_MOST_S, and not at all when no prompt is queued or running."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.fake_messages_api import FakeMessagesAPI, reply, text
from tui_agent.core.agent.model import ModelClient
from tui_agent.ui import first_request
from tui_agent.ui.first_request import after_first_request


@dataclass
class Turns:
    running: bool = False
    queue: list[str] = field(default_factory=list)


@dataclass
class Agent:
    client: Any



async def test_no_prompt_on_its_way_waits_for_nothing(api: FakeMessagesAPI) -> None:
    client = ModelClient(model="claude-sonnet-4-5", max_retries=0)
    started = time.monotonic()
    await after_first_request(Turns(), Agent(client))  # type: ignore[arg-type]
    assert time.monotonic() - started < 0.5


async def test_a_queued_prompt_holds_the_chores_until_the_server_answers(api: FakeMessagesAPI) -> None:
    api.enqueue(reply(text("hello")))
    client = ModelClient(model="claude-sonnet-4-5", max_retries=0)
    waiting = asyncio.ensure_future(after_first_request(Turns(queue=["hi"]), Agent(client)))  # type: ignore[arg-type]
    await asyncio.sleep(0.3)
    assert not waiting.done()
    async for _ in client.stream_reply(system=[], tools=[], messages=[{"role": "user", "content": "hi"}]):
        pass
    await asyncio.wait_for(waiting, 2)
    await client.aclose()


async def test_a_server_that_never_answers_holds_them_no_longer_than_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(100_000)
        await asyncio.sleep(30)

    server = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    monkeypatch.setattr(first_request, "WAIT_AT_MOST_S", 0.5)
    client = ModelClient(model="claude-sonnet-4-5", base_url=f"http://127.0.0.1:{port}", api_key="k", max_retries=0)
    started = time.monotonic()
    await after_first_request(Turns(running=True), Agent(client))  # type: ignore[arg-type]
    assert 0.4 < time.monotonic() - started < 3
    server.close()
    await client.aclose()


async def test_a_turn_that_ended_without_an_answer_holds_them_no_longer() -> None:
    client = ModelClient(model="claude-sonnet-4-5", base_url="http://127.0.0.1:9", api_key="k", max_retries=0)
    turns = Turns(running=True)
    asyncio.get_running_loop().call_later(0.2, setattr, turns, "running", False)  # it failed: nothing listens there
    started = time.monotonic()
    await after_first_request(turns, Agent(client))  # type: ignore[arg-type]
    assert time.monotonic() - started < 1.5
    await client.aclose()
