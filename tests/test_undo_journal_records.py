"""The undo journal reads a session file as untrusted input: a malformed record is skipped, never raised."""

from __future__ import annotations

import json
from pathlib import Path

from tui_agent.core.undo.journal import CHECKPOINT, CHECKPOINT_END, REDO, UNDO, load_turns


def write_records(path: Path, records: list[object]) -> Path:
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path


def test_undo_and_redo_records_naming_odd_turns_are_passed_over(tmp_path: Path) -> None:
    session = write_records(tmp_path / "s.jsonl", [
        {"type": CHECKPOINT, "turn": 1, "prompt": "one", "before": "a" * 40},
        {"type": CHECKPOINT_END, "turn": 1, "after": "b" * 40, "authored": []},
        {"type": CHECKPOINT, "turn": 2, "prompt": "two", "before": "b" * 40},
        {"type": CHECKPOINT_END, "turn": [2], "after": "c" * 40},  # not a turn number: not applied
        {"type": UNDO, "turns": [[1], {"turn": 1}, "1", 1]},  # unhashable and wrong-typed entries, then a real one
        {"type": REDO, "turns": [[2]]},
    ])
    turns = load_turns(session)
    assert [(turn.turn, turn.prompt, turn.after, turn.undone) for turn in turns] == [
        (1, "one", "b" * 40, True), (2, "two", None, False)]
