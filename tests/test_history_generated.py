"""Generated conversations of the shapes the agent stores (blank text from the model, merged user messages after a
cancel, notes after tool results, placeholder replies): once prepared for a request, every one is valid."""

from __future__ import annotations

import random
from typing import Any

from tests.fake_api import validator
from tui_agent.core.agent.history import request_messages
from tui_agent.core.agent.frozen_prefix import with_breakpoints

BLANKS = ["", " ", "\n\n", "\t \n"]
TOOLS = [{"name": name, "description": "x", "input_schema": {"type": "object", "properties": {}}} for name in ("read_file", "grep", "run_shell")]


def text_of(rng: random.Random) -> str:
    return rng.choice(BLANKS) if rng.random() < 0.4 else rng.choice(["Looking.", "Done.\n", "ok  ", "Here:\n\n- a\n- b"])


def assistant_turn(rng: random.Random, ids: list[int]) -> tuple[dict[str, Any], list[str]]:
    blocks: list[dict[str, Any]] = []
    calls: list[str] = []
    for _ in range(rng.randint(0, 3)):
        if rng.random() < 0.5:
            blocks.append({"type": "text", "text": text_of(rng)})
        else:
            ids[0] += 1
            calls.append(f"toolu_{ids[0]}")
            blocks.append({"type": "tool_use", "id": calls[-1], "name": rng.choice(TOOLS)["name"], "input": {}})
    return {"role": "assistant", "content": blocks}, calls


def conversation(rng: random.Random) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": [{"type": "text", "text": "start"}]}]
    ids = [0]
    for _ in range(rng.randint(1, 12)):
        reply, calls = assistant_turn(rng, ids)
        messages.append(reply)
        results: list[dict[str, Any]] = [{"type": "tool_result", "tool_use_id": call, "content": rng.choice(["out", "(empty)"])} for call in calls]
        rng.shuffle(results)
        extra = [{"type": "text", "text": rng.choice(["[catalog update] ...", "next prompt", *BLANKS])}] if rng.random() < 0.5 else []
        if rng.random() < 0.3:  # notes or a prompt stored ahead of the tool results (an older session file)
            results = extra + results
        else:
            results = results + extra
        if not results:
            results = [{"type": "text", "text": "continue"}]
        messages.append({"role": "user", "content": results})
        if rng.random() < 0.2:  # a cancelled turn, then a prompt stored as its own user message
            messages.append({"role": "user", "content": [{"type": "text", "text": "again"}]})
    return messages


def test_every_generated_history_becomes_a_valid_request() -> None:
    rng = random.Random(12)
    previous_end = None
    for case in range(600):
        history = conversation(rng)
        prepared, previous_end = with_breakpoints(request_messages(history), previous_end if rng.random() < 0.5 else None)
        body = {"model": "m", "max_tokens": 10, "tools": [*TOOLS[:-1], {**TOOLS[-1], "cache_control": {"type": "ephemeral"}}],
                "system": [{"type": "text", "text": "s", "cache_control": {"type": "ephemeral"}}], "messages": prepared}
        assert validator.problems(body) == [], (case, history)
