"""The API's own account of each reply (message id, model, usage) read from its raw stream events, and usage objects
with every field Claude Code's types require, filled as Claude Code fills them.

Claude Code's result `usage` is a `NonNullableUsage` (every key of the API's BetaUsage non-null). Each value is the
API's when it reported one; otherwise Claude Code's own default: `service_tier` and `speed` "standard" (tuiagent asks
for neither the priority tier, batch nor fast mode), `inference_geo` "" (not reported), `iterations` [] (no
server-side iterations), `server_tool_use` zeros (tuiagent offers no server tools) and `cache_creation` all 5-minute
writes (tuiagent's cache breakpoints carry no 1-hour TTL). `output_tokens_details` and `fallback_credit`, which the
API only sends in some cases, are passed on when it sent them and left out otherwise.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from tui_agent.core.agent.pricing import UsageTotals, api_usage
from tui_agent.core.content import JsonObject, JsonValue, json_object

DEFAULTS: JsonObject = {"service_tier": "standard", "inference_geo": "", "iterations": [], "speed": "standard"}
"""Claude Code's values for what the API did not report (its empty usage object has the same)."""
COUNTS = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
USAGE_EVENTS = frozenset({"message_start", "message_delta", "message_stop"})


@dataclass
class ApiReply:
    """One assistant message as the API described it: its id, the model that answered, its usage as sent
    (message_start's, updated by message_delta's), its stop reason and sequence."""

    id: str
    model: str
    usage: JsonObject = field(default_factory=dict)
    stop_reason: str | None = None
    stop_sequence: str | None = None


class ReplyTracker:
    """Follows a run's raw stream events (as dicts): `completed` holds each reply whose `message_stop` came, oldest
    first, until its assistant line takes it; `replies` all of them since `reset()`."""

    def __init__(self) -> None:
        self._current: ApiReply | None = None
        self.completed: deque[ApiReply] = deque()
        self.replies: list[ApiReply] = []

    def reset(self) -> None:
        self._current, self.completed, self.replies = None, deque(), []

    def feed(self, raw: JsonObject) -> None:
        kind = raw.get("type")
        if kind == "message_start":
            message = json_object(raw.get("message"))
            self._current = ApiReply(str(message.get("id") or ""), str(message.get("model") or ""),
                                     dict(json_object(message.get("usage"))))
        elif kind == "message_delta" and self._current is not None:
            delta = json_object(raw.get("delta"))
            self._current.stop_reason = _text(delta.get("stop_reason")) or self._current.stop_reason
            self._current.stop_sequence = _text(delta.get("stop_sequence")) or self._current.stop_sequence
            self._current.usage.update({key: value for key, value in json_object(raw.get("usage")).items() if value is not None})
        elif kind == "message_stop" and self._current is not None:
            self.completed.append(self._current)
            self.replies.append(self._current)
            self._current = None

    def take(self) -> ApiReply | None:
        """The oldest completed reply not yet printed (None: the model is not the API's, e.g. a scripted one)."""
        return self.completed.popleft() if self.completed else None


def _text(value: JsonValue | None) -> str | None:
    return value if isinstance(value, str) else None


def _count(usage: JsonValue, key: str) -> int:
    value = usage.get(key) if isinstance(usage, dict) else None
    return value if isinstance(value, int) else 0


def message_usage(sent: Mapping[str, JsonValue]) -> JsonObject:
    """An assistant line's `message.usage`: the API's usage as sent, the required fields filled (module docstring)."""
    usage: JsonObject = {key: value for key, value in sent.items() if value is not None}
    for key in COUNTS:
        usage[key] = _count(usage, key)
    if not isinstance(usage.get("cache_creation"), dict):
        usage["cache_creation"] = {"ephemeral_5m_input_tokens": usage["cache_creation_input_tokens"],
                                   "ephemeral_1h_input_tokens": 0}
    if not isinstance(usage.get("server_tool_use"), dict):
        usage["server_tool_use"] = {"web_search_requests": 0, "web_fetch_requests": 0}
    for key, default in DEFAULTS.items():
        usage.setdefault(key, default)
    return usage


def run_usage(totals: UsageTotals, replies: list[ApiReply]) -> JsonObject:
    """The result line's `usage`: the run's token totals (MCP sampling requests included), the 1-hour cache writes
    and server tool uses summed over its replies, and the newest reported tier, speed, region and iterations (as
    Claude Code accumulates them)."""
    shaped = [message_usage(reply.usage) for reply in replies]
    cache = {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0}
    server = {"web_search_requests": 0, "web_fetch_requests": 0}
    for usage in shaped:
        for key in cache:
            cache[key] += _count(usage["cache_creation"], key)
        for key in server:
            server[key] += _count(usage["server_tool_use"], key)
    # the cache writes the replies did not say were 1-hour ones (or a model not the API's) were 5-minute writes
    cache["ephemeral_5m_input_tokens"] = max(0, totals.cache_write_tokens - cache["ephemeral_1h_input_tokens"])
    result: JsonObject = {**api_usage(totals), "cache_creation": {**cache}, "server_tool_use": {**server}}
    for key, default in DEFAULTS.items():
        result[key] = next((reply.usage[key] for reply in reversed(replies) if reply.usage.get(key) is not None), default)
    details = [usage["output_tokens_details"] for usage in shaped if isinstance(usage.get("output_tokens_details"), dict)]
    if details:
        result["output_tokens_details"] = {"thinking_tokens": sum(_count(d, "thinking_tokens") for d in details)}
    credit = next((usage["fallback_credit"] for usage in reversed(shaped) if usage.get("fallback_credit") is not None), None)
    if credit is not None:
        result["fallback_credit"] = credit
    return result

