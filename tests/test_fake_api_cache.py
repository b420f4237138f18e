"""The fake server's prompt-cache model: breakpoints write prefixes of at least 1,024 tokens, later requests read them."""

from __future__ import annotations

from typing import Any

import anthropic

from tests.fake_api.cache import PromptCache, prompt_blocks
from tests.fake_messages_api import FakeMessagesAPI, reply, text

MARK = {"type": "ephemeral"}
BIG = "x" * 8000  # 2,000 tokens at 4 characters a token


def body(*texts: str, marks: tuple[int, ...] = (), system: str = BIG) -> dict[str, Any]:
    """One user message per text (assistant "ok" between them), cache_control on the blocks of the given message indexes."""
    messages: list[dict[str, Any]] = []
    for index, value in enumerate(texts):
        if index:
            messages.append({"role": "assistant", "content": [{"type": "text", "text": "ok"}]})
        messages.append({"role": "user", "content": [{"type": "text", "text": value}]})
    for index in marks:
        messages[index]["content"][-1]["cache_control"] = dict(MARK)
    return {"model": "m", "system": [{"type": "text", "text": system, "cache_control": dict(MARK)}], "messages": messages}


def test_a_breakpoint_writes_then_a_same_prefix_reads() -> None:
    cache = PromptCache()
    first = cache.account(body("one"))
    assert first.read == 0 and first.write > 2000 and first.ideal == 0
    second = cache.account(body("two"))
    assert second.read == first.write and second.write == 0 and second.ideal == first.write


def test_below_1024_tokens_nothing_is_written() -> None:
    cache = PromptCache()
    cache.account(body("one", system="short"))
    again = cache.account(body("one", system="short"))
    assert again.read == 0 and again.write == 0 and again.ideal == again.total


def test_a_change_early_invalidates_everything_after_it() -> None:
    cache = PromptCache()
    cache.account(body("one", marks=(0,)))
    changed = cache.account(body("one", marks=(0,), system=BIG[:-1] + "y"))
    assert changed.read == 0 and changed.ideal == 0


def test_the_read_looks_back_20_blocks_from_a_breakpoint_and_no_further() -> None:
    texts = [f"message {i}" for i in range(30)]
    blocks = prompt_blocks(body(*texts[:1]))
    system_tokens, with_first = blocks[0].tokens, blocks[0].tokens + blocks[1].tokens
    cache = PromptCache()
    cache.account(body(*texts[:1], marks=(0,)))  # writes the system block, and it with the first message
    near = cache.account(body(*texts[:10], marks=(18,)))  # its breakpoint 18 blocks after the first message
    assert near.read == with_first
    cache = PromptCache()
    cache.account(body(*texts[:1], marks=(0,)))
    far = cache.account(body(*texts[:12], marks=(22,)))  # 22 blocks after: only the system breakpoint's own prefix
    assert far.read == system_tokens and far.ideal == with_first


def test_blocks_are_compared_without_their_cache_control() -> None:
    marked, plain = prompt_blocks(body("one", marks=(0,))), prompt_blocks(body("one"))
    assert [b.key for b in marked] == [b.key for b in plain] and marked[-1].breakpoint and not plain[-1].breakpoint


def test_the_server_reports_cache_figures_in_usage() -> None:
    request = {"max_tokens": 10, **body("one", marks=(0,))}
    with FakeMessagesAPI() as api:
        api.enqueue(reply(text("a")), reply(text("b")))
        client = anthropic.Anthropic(api_key="k", base_url=api.base_url, max_retries=0)
        first, second = client.messages.create(**request).usage, client.messages.create(**request).usage
    assert first.cache_creation_input_tokens == api.cache_log[0].write > 2000 and first.cache_read_input_tokens == 0
    assert second.cache_read_input_tokens == first.cache_creation_input_tokens and second.cache_creation_input_tokens == 0
    assert second.input_tokens == api.cache_log[1].uncached
