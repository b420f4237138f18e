"""A session file read back as typed turns (older files included), repaired so that the conversation can be sent again.

Records: `{"type": "message", "turn": kind, "message": {"role", "content"}}` (an older file has no `turn`: the
role and the blocks say which turn it is), `{"type": "rollback", "drop": n}` (the last n turns were taken back),
`{"type": "clear"}` (the model started afresh), `{"type": "thinking_dropped"}` (the API refused the thinking
blocks so far: they are left out). Every tool_use is answered by the results after it: by the
result its ToolCallFinished event recorded, else as interrupted.
"""

from __future__ import annotations

from pathlib import Path

from tui_agent.core.agent.session_events import BadEventRecord, decode_event, is_event_record
from tui_agent.core.agent.session_records import INTERRUPTED_RESULT, read_records
from tui_agent.core.agent.turns import AssistantTurn, Block, ToolResults, Turn, UserTurn, turn_of
from tui_agent.core.content import ToolResultBlock
from tui_agent.core.events import ToolCallFinished

ROLLBACK_RECORD = "rollback"
THINKING_DROPPED_RECORD = "thinking_dropped"


def load_turns(path: Path) -> list[Turn]:
    """The session's turns since its last `clear`, repaired."""
    turns: list[Turn] = []
    finished: dict[str, ToolCallFinished] = {}
    for record in read_records(path):
        kind, drop = record.get("type"), record.get("drop")
        if kind == "clear":
            turns.clear()
        elif kind == ROLLBACK_RECORD and isinstance(drop, int) and not isinstance(drop, bool) and drop > 0:
            del turns[-drop:]
        elif kind == THINKING_DROPPED_RECORD:
            turns = [turn.without_thinking() if isinstance(turn, AssistantTurn) and turn.thinking else turn for turn in turns]
        elif kind == "message" and (turn := turn_of(record.get("message"), record.get("turn"))) is not None:
            turns.append(turn)
        elif is_event_record(record) and record.get("event") == "ToolCallFinished":
            try:
                event = decode_event(record)
            except BadEventRecord:
                continue
            if isinstance(event, ToolCallFinished):
                finished[event.call_id] = event
    return repair_turns(turns, finished)


def repair_turns(turns: list[Turn], finished: dict[str, ToolCallFinished] | None = None) -> list[Turn]:
    """Every tool_use answered right after its turn (the recorded result of a call that finished, else interrupted);
    results that answer no call of the turn before them are left out."""
    done = finished or {}
    repaired: list[Turn] = []
    pending: dict[str, None] = {}  # the last assistant turn's calls not answered yet, in order

    def close() -> None:
        if pending:
            repaired.append(ToolResults(tuple(_answer(call_id, done.get(call_id)) for call_id in pending)))
            pending.clear()

    for turn in turns:
        if isinstance(turn, ToolResults):
            kept = tuple(block for block in turn.blocks
                         if block["type"] != "tool_result" or block["tool_use_id"] in pending)
            for block in kept:
                if block["type"] == "tool_result":
                    pending.pop(block["tool_use_id"], None)
            if any(block["type"] == "tool_result" for block in kept):
                repaired.append(ToolResults(kept))
            elif kept:
                repaired.append(UserTurn(kept, "note"))
            continue
        close()
        repaired.append(turn)
        if isinstance(turn, AssistantTurn):
            pending.update((call["id"], None) for call in turn.tool_uses)
    close()
    return repaired


def _answer(call_id: str, finished: ToolCallFinished | None) -> Block:
    """The tool_result for a call the transcript never answered: its recorded result, else "interrupted"."""
    if finished is None:
        return {"type": "tool_result", "tool_use_id": call_id, "content": INTERRUPTED_RESULT, "is_error": True}
    block: ToolResultBlock = {"type": "tool_result", "tool_use_id": call_id, "content": finished.result or "(empty)"}
    if finished.is_error:
        block["is_error"] = True
    return block
