"""The model client against the real SDK and the fake server: streaming, retries, clear errors, usage and cost."""

from __future__ import annotations

import socket
from typing import Any

import pytest

from tests.fake_messages_api import FakeMessagesAPI, http_error, mid_stream_error, reply, text, tool_use
from tui_agent.core.agent.model import ModelClient, ModelError, ModelReply
from tui_agent.core.agent.pricing import DEFAULT_MODEL, KNOWN_MODELS, price_for
from tui_agent.core.events import Notice, TextDelta

SYSTEM = [{"type": "text", "text": "be brief", "cache_control": {"type": "ephemeral"}}]
MESSAGES = [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]


async def collect(client: ModelClient, tools: list[dict[str, Any]] | None = None) -> tuple[list[Any], ModelReply]:
    events: list[Any] = []
    final: ModelReply | None = None
    async for item in client.stream_reply(system=SYSTEM, tools=tools or [], messages=MESSAGES):
        if isinstance(item, ModelReply):
            final = item
        else:
            events.append(item)
    assert final is not None
    return events, final


def client_for(api: FakeMessagesAPI, **kwargs: Any) -> ModelClient:
    return ModelClient(api_key="test-key", base_url=api.base_url, retry_base_delay_s=0.01, **kwargs)


def test_default_model_is_a_sonnet_from_the_projects_own_list() -> None:
    assert "sonnet" in DEFAULT_MODEL and DEFAULT_MODEL in KNOWN_MODELS
    assert price_for(DEFAULT_MODEL) is not None and price_for("llama3:8b") is None


async def test_streams_text_deltas_then_the_full_reply_with_usage_and_cost() -> None:
    with FakeMessagesAPI() as api:
        api.enqueue(reply(text("The answer is forty-two, as usual."), tool_use("grep", {"pattern": "x"}, id="toolu_a"),
                          usage={"input_tokens": 1000, "output_tokens": 100, "cache_read_input_tokens": 2000, "cache_creation_input_tokens": 400}))
        events, final = await collect(client_for(api, model=DEFAULT_MODEL), tools=[{"name": "grep", "input_schema": {"type": "object"}}])
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert len(deltas) > 1 and "".join(deltas) == "The answer is forty-two, as usual."
    assert final.tool_uses == [{"type": "tool_use", "id": "toolu_a", "name": "grep", "input": {"pattern": "x"}}]
    assert final.stop_reason == "tool_use"
    usage = final.usage
    assert (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens, usage.cache_write_tokens) == (1000, 100, 2000, 400)
    # Sonnet: $3/MTok input, $15 output, cache read 0.1x, cache write 1.25x
    assert usage.cost_usd == pytest.approx((1000 * 3 + 100 * 15 + 2000 * 0.3 + 400 * 3.75) / 1e6)
    body = api.requests[0].body
    assert body["stream"] is True and body["model"] == DEFAULT_MODEL
    assert body["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert api.requests[0].api_key == "test-key"


async def test_429_and_529_are_retried_with_a_notice() -> None:
    with FakeMessagesAPI() as api:
        api.enqueue(http_error(429), http_error(529), reply(text("finally")))
        events, final = await collect(client_for(api))
    notices = [e.message for e in events if isinstance(e, Notice)]
    assert len(notices) == 2 and "429" in notices[0] and "retrying (1/4)" in notices[0] and "529" in notices[1]
    assert final.text == "finally" and len(api.requests) == 3
    assert api.requests[0].body == api.requests[2].body  # the same prompt is sent again


async def test_the_wait_before_a_retry_is_the_servers_retry_after_else_the_backoff() -> None:
    notices: list[str] = []
    with FakeMessagesAPI() as api:
        api.enqueue(http_error(529, headers={"retry-after-ms": "200"}), http_error(503, headers={"retry-after-ms": "soon"}),
                    http_error(400), reply(text("never asked")))
        with pytest.raises(ModelError) as caught:
            client = ModelClient(api_key="test-key", base_url=api.base_url, retry_base_delay_s=0.4)
            async for item in client.stream_reply(system=SYSTEM, tools=[], messages=MESSAGES):
                notices += [item.message] if isinstance(item, Notice) else []
    assert caught.value.kind == "bad_request" and len(api.requests) == 3, "a 400 is final"
    waits = [notice.split(" — ")[1] for notice in notices]
    assert waits[0] == "retrying (1/4) in 0.2s" and waits[1] in ("retrying (2/4) in 0.8s", "retrying (2/4) in 0.9s"), waits


async def test_mid_stream_error_is_retried_without_repeating_shown_text() -> None:
    with FakeMessagesAPI() as api:
        api.enqueue(mid_stream_error(text("Hello, this is the start")), reply(text("Hello, this is the start of a longer reply.")))
        events, final = await collect(client_for(api))
    shown = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert shown == "Hello, this is the start of a longer reply."
    assert any(isinstance(e, Notice) and "interrupted" in e.message for e in events)
    assert final.text == "Hello, this is the start of a longer reply."


async def test_retries_give_up_after_the_limit() -> None:
    with FakeMessagesAPI() as api:
        api.enqueue(*[http_error(503)] * 3)
        with pytest.raises(ModelError) as caught:
            await collect(client_for(api, max_retries=2))
    assert caught.value.kind == "overloaded" and "503" in caught.value.message and len(api.requests) == 3


async def test_401_says_how_to_configure_the_key_or_base_url() -> None:
    with FakeMessagesAPI(api_key="the-right-key") as api:
        with pytest.raises(ModelError) as caught:
            await collect(client_for(api))
    assert caught.value.kind == "auth" and len(api.requests) == 1
    assert "ANTHROPIC_API_KEY" in caught.value.message and "ANTHROPIC_BASE_URL" in caught.value.message


async def test_unreachable_server_gives_a_clear_message() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    client = ModelClient(api_key="k", base_url=f"http://127.0.0.1:{port}", retry_base_delay_s=0.01, max_retries=1)
    with pytest.raises(ModelError) as caught:
        await collect(client)
    assert caught.value.kind == "connection"
    assert f"cannot reach the model server at http://127.0.0.1:{port}" in caught.value.message


async def test_prompt_too_long_is_reported_as_such() -> None:
    with FakeMessagesAPI() as api:
        api.enqueue(http_error(400, message="prompt is too long: 250000 tokens > 200000 maximum"))
        with pytest.raises(ModelError) as caught:
            await collect(client_for(api))
    assert caught.value.kind == "context_too_long"
