"""Reply assembly over the SDK's accumulator, through the real SDK and the fake server: tool inputs are strict JSON."""

from __future__ import annotations

from typing import Any

from tests.fake_messages_api import FakeMessagesAPI, reply, text, tool_use_raw
from tui_agent.core.agent.model import ModelClient, ModelReply

TOOLS: list[dict[str, Any]] = [{"name": "f", "input_schema": {"type": "object"}}]
MESSAGES: list[Any] = [{"role": "user", "content": [{"type": "text", "text": "go"}]}]


async def final_reply(*blocks: Any) -> ModelReply:
    with FakeMessagesAPI() as api:
        api.enqueue(reply(*blocks))
        client = ModelClient(api_key="test-key", base_url=api.base_url, retry_base_delay_s=0.01)
        replies = [item async for item in client.stream_reply(system=[], tools=TOOLS, messages=MESSAGES)
                   if isinstance(item, ModelReply)]
        await client.aclose()
    assert len(replies) == 1
    return replies[0]


async def test_an_input_cut_short_in_a_complete_reply_is_invalid_not_a_smaller_object() -> None:
    """The SDK's partial-mode parse would read `{"path": "a.txt", "mode": "ov` as {"path": "a.txt"}."""
    final = await final_reply(tool_use_raw("f", '{"path": "a.txt", "mode": "ov', id="toolu_1"))
    assert final.tool_uses == [{"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}]
    assert "not valid JSON" in final.invalid_inputs["toolu_1"]


async def test_invalid_json_mid_stream_leaves_the_rest_of_the_reply_whole() -> None:
    """The SDK's MessageStream raises on a trailing comma in the middle of the stream; here the reply completes."""
    final = await final_reply(tool_use_raw("f", '{"a": 1, }', id="toolu_1"), tool_use_raw("f", '{"a": 2}', id="toolu_2"),
                              text("Both called."))
    assert [block["input"] for block in final.tool_uses] == [{}, {"a": 2}]
    assert list(final.invalid_inputs) == ["toolu_1"] and "not valid JSON" in final.invalid_inputs["toolu_1"]
    assert final.text == "Both called."


async def test_an_input_that_is_not_an_object_or_holds_nan_is_refused() -> None:
    final = await final_reply(tool_use_raw("f", "[1, 2]", id="toolu_1"), tool_use_raw("f", '{"x": [NaN]}', id="toolu_2"),
                              tool_use_raw("f", "", id="toolu_3"))
    assert "must be a JSON object, not list" in final.invalid_inputs["toolu_1"]
    assert "argument 'x'[0] must be a finite number, not nan" in final.invalid_inputs["toolu_2"]
    assert "toolu_3" not in final.invalid_inputs  # no input at all is the empty object
    assert [block["input"] for block in final.tool_uses] == [{}, {}, {}]
