"""The fake server's strict mode: each documented Messages API rule, valid and invalid requests, the 400 as the SDK sees it."""

from __future__ import annotations

import copy
from typing import Any

import anthropic
import pytest

from tests.fake_api import validator
from tests.fake_messages_api import FakeMessagesAPI, InvalidRequestsSent, reply, text

TOOL = {"name": "read_file", "description": "Read a file.", "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}}
CALL = {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a.txt"}}
RESULT = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "hello"}


def valid() -> dict[str, Any]:
    """A request using every feature the rules are about: tools, a system block, tool use, cache_control."""
    return copy.deepcopy({
        "model": "claude-sonnet-5-5", "max_tokens": 100,
        "tools": [{**TOOL, "cache_control": {"type": "ephemeral"}}],
        "system": [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "read a.txt"}]},
            {"role": "assistant", "content": [{"type": "text", "text": "Reading."}, CALL]},
            {"role": "user", "content": [RESULT, {"type": "text", "text": "and then?", "cache_control": {"type": "ephemeral"}}]},
        ],
    })


def with_change(change: Any) -> dict[str, Any]:
    body = valid()
    change(body)
    return body


def test_a_valid_request_has_no_problem() -> None:
    assert validator.problems(valid()) == []
    prefill = with_change(lambda b: b["messages"].append({"role": "assistant", "content": [{"type": "text", "text": "Sure"}]}))
    assert validator.problems(prefill) == []


INVALID = {
    "a tool_use without its result": (
        lambda b: b["messages"][2].update(content=[{"type": "text", "text": "never mind"}]),
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1. "
        "Each `tool_use` block must have a corresponding `tool_result` block in the next message."),
    "a result answering nothing": (
        lambda b: b["messages"][2]["content"][0].update(tool_use_id="toolu_9"),
        "messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_9. "
        "Each `tool_result` block must have a corresponding `tool_use` block in the previous message."),
    "text before the tool results": (
        lambda b: b["messages"][2]["content"].reverse(),
        "messages.2: Did not find 1 `tool_result` block(s) at the beginning of this message. "
        "Messages following `tool_use` blocks must begin with a matching number of `tool_result` blocks."),
    "an empty message": (
        lambda b: b["messages"].insert(0, {"role": "user", "content": []}) or b["messages"].insert(1, {"role": "assistant", "content": [{"type": "text", "text": "ok"}]}),
        "messages.0: all messages must have non-empty content except for the optional final assistant message"),
    "a whitespace-only text block": (
        lambda b: b["messages"][1]["content"].insert(0, {"type": "text", "text": "\n\n"}),
        "messages: text content blocks must contain non-whitespace text"),
    "an empty text block": (
        lambda b: b["messages"][0]["content"].append({"type": "text", "text": ""}),
        "messages: text content blocks must be non-empty"),
    "cache_control on a blank text block": (
        lambda b: b["messages"][0]["content"].append({"type": "text", "text": " ", "cache_control": {"type": "ephemeral"}}),
        "messages.0.content.1.text: cache_control cannot be set for empty text blocks"),
    "a tool name with a dot": (
        lambda b: b["tools"][0].update(name="files.read"),
        "tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'"),
    "a tool name of 65 characters": (
        lambda b: b["tools"][0].update(name="t" * 65),
        "tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'"),
    "a non-ASCII tool name": (
        lambda b: b["tools"][0].update(name="lire_fichier_é"),
        "tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'"),
    "two tools of one name": (
        lambda b: b["tools"].append(copy.deepcopy(TOOL)),
        "tools: Tool names must be unique."),
    "an input schema that is not an object": (
        lambda b: b["tools"][0]["input_schema"].update(type="string"),
        "tools.0.custom.input_schema.type: Input should be 'object'"),
    "five cache breakpoints": (
        lambda b: [b["messages"][i]["content"][0].update(cache_control={"type": "ephemeral"}) for i in range(2)],
        "A maximum of 4 blocks with cache_control may be provided. Found 5."),
    "a tool_use input that is not an object": (
        lambda b: b["messages"][1]["content"][1].update(input='{"path": "a.txt"'),
        "messages.1.content.1.tool_use.input: Input should be a valid dictionary"),
    "trailing whitespace ending a final assistant message": (
        lambda b: b["messages"].append({"role": "assistant", "content": [{"type": "text", "text": "Sure, "}]}),
        "messages: final assistant content cannot end with trailing whitespace"),
    "two user messages in a row": (
        lambda b: b["messages"].append({"role": "user", "content": "again"}),
        'messages: roles must alternate between "user" and "assistant", but found multiple "user" roles in a row'),
    "an assistant message first": (
        lambda b: b["messages"].insert(0, {"role": "assistant", "content": "Hello"}),
        'messages: first message must use the "user" role'),
}


@pytest.mark.parametrize("case", sorted(INVALID))
def test_each_broken_rule_gets_the_real_api_message(case: str) -> None:
    change, message = INVALID[case]
    assert message in validator.problems(with_change(change))


def test_the_strict_server_answers_the_real_400_and_fails_the_test() -> None:
    body = with_change(INVALID["a whitespace-only text block"][0])
    body.pop("tools")
    body["messages"] = body["messages"][:1] + [{"role": "assistant", "content": [{"type": "text", "text": "\n\n"}, {"type": "text", "text": "ok"}]},
                                              {"role": "user", "content": "go on"}]
    with pytest.raises(InvalidRequestsSent, match="text content blocks must contain non-whitespace text"):
        with FakeMessagesAPI() as api:
            api.enqueue(reply(text("not used")))
            client = anthropic.Anthropic(api_key="k", base_url=api.base_url, max_retries=0)
            with pytest.raises(anthropic.BadRequestError) as refused:
                client.messages.create(**body)
            assert refused.value.status_code == 400
            assert refused.value.body["type"] == "error"  # type: ignore[index]
            assert refused.value.body["error"] == {"type": "invalid_request_error", "message": "messages: text content blocks must contain non-whitespace text"}  # type: ignore[index]
            assert api.pending == 1  # a refused request does not use up a scripted response
    with FakeMessagesAPI() as api:  # a test that means to send it takes the violations and passes
        try:
            anthropic.Anthropic(api_key="k", base_url=api.base_url, max_retries=0).messages.create(**body)
        except anthropic.BadRequestError:
            pass
        assert api.take_violations() == ["messages: text content blocks must contain non-whitespace text"]
