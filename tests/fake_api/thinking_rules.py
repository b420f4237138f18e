"""Extended thinking in the fake Messages API: signed thinking blocks, and the documented rules for sending them back.

Signatures are an HMAC of the thinking text under a per-process secret, redacted data an HMAC-tagged token: a block
changed in any way (text, signature, data) fails verification as the real API's does. The ledger remembers which
tool_use ids were issued in a reply that thought, so the "final assistant message must start with a thinking block"
rule applies exactly where the real API applies it (adaptive thinking may answer without thinking).

Messages quoted from public bug reports: the final-assistant rule (anthropics/claude-code, opencode #3077, haystack
#2146), "When thinking is disabled, ..." (forgecode #1853), "Thinking may not be enabled when tool_choice forces tool
use." (llama_index #19641), the temperature and budget rules. Written in the API's style, not found quoted: the
redacted_thinking data text and the effort enum text.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import threading
from collections.abc import Iterator
from typing import Any

_SECRET = os.urandom(32)
EFFORTS = ("low", "medium", "high", "xhigh", "max")
DOCS = "https://docs.claude.com/en/docs/build-with-claude/extended-thinking"


def sign(thinking: str) -> str:
    return base64.b64encode(hmac.new(_SECRET, b"thinking:" + thinking.encode(), hashlib.sha256).digest()).decode()


def signature_ok(thinking: Any, signature: Any) -> bool:
    return isinstance(thinking, str) and isinstance(signature, str) and hmac.compare_digest(sign(thinking), signature)


def redacted_data(seed: str) -> str:
    token = base64.b64encode(seed.encode()).decode()
    tag = hmac.new(_SECRET, b"redacted:" + token.encode(), hashlib.sha256).hexdigest()[:32]
    return f"{token}.{tag}"


def redacted_ok(data: Any) -> bool:
    if not isinstance(data, str) or "." not in data:
        return False
    token, tag = data.rsplit(".", 1)
    return hmac.compare_digest(hmac.new(_SECRET, b"redacted:" + token.encode(), hashlib.sha256).hexdigest()[:32], tag)


class ThinkingLedger:
    """The tool_use ids the server sent in replies that began with thinking."""

    def __init__(self) -> None:
        self._ids: set[str] = set()
        self._lock = threading.Lock()

    def record(self, tool_use_ids: list[str]) -> None:
        with self._lock:
            self._ids.update(tool_use_ids)

    def thought_before(self, tool_use_id: str) -> bool:
        with self._lock:
            return tool_use_id in self._ids


def enabled(body: dict[str, Any]) -> bool:
    thinking = body.get("thinking")
    return isinstance(thinking, dict) and thinking.get("type") in ("enabled", "adaptive")


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [block for block in content or [] if isinstance(block, dict)]


def problems(body: dict[str, Any], ledger: ThinkingLedger | None = None) -> Iterator[str]:
    yield from _config_problems(body)
    messages = body.get("messages")
    if not isinstance(messages, list):
        return
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        for position, block in enumerate(_blocks(message)):
            if block.get("type") == "thinking" and not signature_ok(block.get("thinking"), block.get("signature")):
                yield f"messages.{index}.content.{position}: Invalid `signature` in `thinking` block"
            elif block.get("type") == "redacted_thinking" and not redacted_ok(block.get("data")):
                yield f"messages.{index}.content.{position}: Invalid `data` in `redacted_thinking` block"
    yield from _final_turn_problems(body, messages, ledger)


def _config_problems(body: dict[str, Any]) -> Iterator[str]:
    thinking = body.get("thinking")
    if thinking is not None:
        kind = thinking.get("type") if isinstance(thinking, dict) else None
        if kind not in ("enabled", "disabled", "adaptive"):
            yield "thinking: Input tag does not match any of the expected tags: 'enabled', 'disabled', 'adaptive'"
        elif kind == "enabled":
            budget = thinking.get("budget_tokens")
            if not isinstance(budget, int):
                yield "thinking.enabled.budget_tokens: Field required"
            elif budget < 1024:
                yield "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
            elif isinstance(body.get("max_tokens"), int) and body["max_tokens"] <= budget:
                yield f"`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at {DOCS}#max-tokens-and-context-window-size"
    output_config = body.get("output_config")
    if isinstance(output_config, dict) and "effort" in output_config and output_config["effort"] not in EFFORTS:
        yield "output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh' or 'max'"
    if not enabled(body):
        return
    tool_choice = body.get("tool_choice")
    if isinstance(tool_choice, dict) and tool_choice.get("type") in ("any", "tool"):
        yield "Thinking may not be enabled when tool_choice forces tool use."
    if "temperature" in body and body["temperature"] != 1:
        yield f"`temperature` may only be set to 1 when thinking is enabled. Please consult our documentation at {DOCS}#feature-compatibility"
    for name in ("top_k",):
        if name in body:
            yield f"`{name}` is not supported when thinking is enabled. Please consult our documentation at {DOCS}#feature-compatibility"


def _final_turn_problems(body: dict[str, Any], messages: list[Any], ledger: ThinkingLedger | None) -> Iterator[str]:
    if not messages or not isinstance(messages[-1], dict):
        return
    last = messages[-1]
    if last.get("role") == "assistant" and not enabled(body):
        for position, block in enumerate(_blocks(last)):
            if block.get("type") in ("thinking", "redacted_thinking"):
                yield (f"messages.{len(messages) - 1}.content.{position}: When thinking is disabled, an `assistant` message in the "
                       "final position cannot contain `thinking`. To use thinking blocks, enable `thinking` in your request.")
                return
    if not enabled(body) or ledger is None or last.get("role") != "user" or len(messages) < 2:
        return
    if not any(block.get("type") == "tool_result" for block in _blocks(last)):
        return
    assistant = messages[-2]
    blocks = _blocks(assistant) if isinstance(assistant, dict) else []
    calls = [str(block.get("id")) for block in blocks if block.get("type") == "tool_use"]
    if blocks and any(ledger.thought_before(call) for call in calls) and blocks[0].get("type") not in ("thinking", "redacted_thinking"):
        yield (f"messages.{len(messages) - 2}.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
               f"`{blocks[0].get('type')}`. When `thinking` is enabled, a final `assistant` message must start with a thinking "
               "block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking "
               "blocks from previous turns. To avoid this requirement, disable `thinking`. Please consult our documentation "
               f"at {DOCS}")
