"""The API's own account of each reply, read from raw stream events, and the usage objects built from it."""

from __future__ import annotations

from tui_agent.core.agent.pricing import UsageTotals
from tui_agent.core.headless.api_replies import ReplyTracker, message_usage, run_usage


def feed(tracker: ReplyTracker, message_id: str, usage: dict, delta_usage: dict, stop: str = "end_turn") -> None:
    tracker.feed({"type": "message_start", "message": {"id": message_id, "model": "claude-x", "usage": usage}})
    tracker.feed({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})
    tracker.feed({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}, "usage": delta_usage})
    tracker.feed({"type": "message_stop"})


def test_replies_are_taken_in_order_with_the_apis_usage_merged() -> None:
    tracker = ReplyTracker()
    feed(tracker, "msg_a", {"input_tokens": 10, "output_tokens": 1, "service_tier": "priority",
                            "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 30},
                            "cache_creation_input_tokens": 30}, {"output_tokens": 7}, stop="tool_use")
    tracker.feed({"type": "message_start", "message": {"id": "msg_cut", "model": "claude-x", "usage": {}}})  # no stop
    feed(tracker, "msg_b", {"input_tokens": 5, "output_tokens": 1}, {"output_tokens": 3, "server_tool_use": None})
    first, second = tracker.take(), tracker.take()
    assert tracker.take() is None and first and second
    assert (first.id, first.stop_reason, first.usage["output_tokens"]) == ("msg_a", "tool_use", 7)
    assert second.id == "msg_b" and "server_tool_use" not in second.usage  # a null from the API is not kept
    shown = message_usage(second.usage)
    assert shown["service_tier"] == "standard" and shown["speed"] == "standard" and shown["iterations"] == []
    assert shown["cache_creation"] == {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0}
    total = run_usage(UsageTotals(15, 10, 0, 50, 0.0, 2), tracker.replies)
    assert total["service_tier"] == "priority"  # the newest reported value
    assert total["cache_creation"] == {"ephemeral_1h_input_tokens": 30, "ephemeral_5m_input_tokens": 20}
    assert "output_tokens_details" not in total and "fallback_credit" not in total


def test_a_run_without_api_replies_has_every_required_key() -> None:
    total = run_usage(UsageTotals(1, 2, 3, 4, 0.0, 1), [])
    assert all(total[key] is not None for key in ("cache_creation", "server_tool_use", "service_tier", "speed",
                                                  "inference_geo", "iterations"))
    assert total["cache_creation"]["ephemeral_5m_input_tokens"] == 4
