"""What each stop reason of the Messages API means for the turn, and the message the person sees for it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

CUT_OFF = ("max_tokens", "model_context_window_exceeded")  # the reply's last block may be incomplete
REFUSED_PLACEHOLDER = "[the model declined this request (stop_reason: refusal); its reply is not kept]"


@dataclass(frozen=True)
class StopHandling:
    """`message` for the person (empty: nothing to say), `level`, and what the loop does: `continue_turn` (pause_turn:
    send the conversation again as it is), `drop_reply` (refusal: keep a placeholder, not the refused content),
    `shorten` (the context window is full: shorten old tool results before the next request)."""

    message: str = ""
    level: Literal["info", "warning", "error"] = "info"
    continue_turn: bool = False
    drop_reply: bool = False
    shorten: bool = False


def handling(stop_reason: str, *, max_tokens: int, stop_sequence: str | None = None) -> StopHandling:
    if stop_reason == "max_tokens":
        return StopHandling(f"the reply was cut off at the output limit ({max_tokens} tokens); say 'continue' for the rest", "warning")
    if stop_reason == "model_context_window_exceeded":
        return StopHandling("the reply stopped because the conversation filled the model's context window; old tool results "
                            "will be shortened before the next request: say 'continue' for the rest, or /clear to start afresh",
                            "warning", shorten=True)
    if stop_reason == "refusal":
        return StopHandling("the model declined to continue (stop_reason: refusal); its reply was left out of the "
                            "conversation: rephrase the request, or /clear to start afresh", "error", drop_reply=True)
    if stop_reason == "pause_turn":
        return StopHandling("the model paused a long turn; continuing it", "info", continue_turn=True)
    if stop_reason == "stop_sequence":
        return StopHandling(f"the reply stopped at the stop sequence {stop_sequence!r}" if stop_sequence else
                            "the reply stopped at a stop sequence", "info")
    if stop_reason in ("end_turn", "tool_use"):
        return StopHandling()
    return StopHandling(f"the reply ended with an unknown stop reason {stop_reason!r}", "warning")
