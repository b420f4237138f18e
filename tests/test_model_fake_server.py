"""The fake Messages API server speaks the wire format the real anthropic SDK expects."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anthropic
import pytest
from anthropic import AsyncAnthropic

from tests.fake_messages_api import FakeMessagesAPI, http_error, mid_stream_error, reply, text, tool_use


async def test_streams_text_and_tool_use_to_the_real_sdk() -> None:
    with FakeMessagesAPI() as api:
        api.enqueue(reply(text("Hello there, world!"), tool_use("read_file", {"path": "README.md"}, id="toolu_1")))
        client = AsyncAnthropic(api_key="k", base_url=api.base_url, max_retries=0)
        deltas: list[str] = []
        async with client.messages.stream(model="m", max_tokens=10, messages=[{"role": "user", "content": "hi"}], tools=[{"name": "read_file", "input_schema": {"type": "object"}}]) as stream:
            async for event in stream:
                if event.type == "content_block_delta" and event.delta.type == "text_delta":
                    deltas.append(event.delta.text)
            message = await stream.get_final_message()
    assert "".join(deltas) == "Hello there, world!" and len(deltas) > 1
    assert message.content[1].input == {"path": "README.md"} and message.stop_reason == "tool_use"
    assert api.requests[0].tool_names == ["read_file"] and api.requests[0].api_key == "k"


async def test_error_statuses_mid_stream_errors_and_empty_queue() -> None:
    with FakeMessagesAPI(api_key="good") as api:
        api.enqueue(http_error(429), mid_stream_error(text("partial")))
        client = AsyncAnthropic(api_key="good", base_url=api.base_url, max_retries=0)
        args = dict(model="m", max_tokens=10, messages=[{"role": "user", "content": "hi"}])
        with pytest.raises(anthropic.RateLimitError):
            await client.messages.create(**args)
        with pytest.raises(anthropic.APIStatusError, match="overloaded_error"):
            async with client.messages.stream(**args) as stream:
                async for _ in stream:
                    pass
        with pytest.raises(anthropic.BadRequestError, match="no scripted response left"):
            await client.messages.create(**args)
        with pytest.raises(anthropic.AuthenticationError):
            await AsyncAnthropic(api_key="bad", base_url=api.base_url, max_retries=0).messages.create(**args)
        api.respond_with(lambda request: reply(text(f"{len(request.messages)} message(s)")))
        message = await client.messages.create(**args)
    assert message.content[0].text == "1 message(s)"


def test_runs_as_a_script(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"text": "first"}, {"repeat": {"text": "again"}}]))
    server = subprocess.Popen([sys.executable, str(Path(__file__).with_name("fake_messages_api.py")), "--script", str(script)], stdout=subprocess.PIPE, text=True)
    try:
        line = server.stdout.readline() if server.stdout else ""
        base_url = line.strip().removeprefix("listening on ")
        client = anthropic.Anthropic(api_key="k", base_url=base_url, max_retries=0)
        texts = [client.messages.create(model="m", max_tokens=5, messages=[{"role": "user", "content": "x"}]).content[0].text for _ in range(3)]
    finally:
        server.terminate()
        server.wait(timeout=10)
    assert texts == ["first", "again", "again"]
