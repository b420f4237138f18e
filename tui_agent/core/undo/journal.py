"""The turn journal in a session file: each turn's checkpoints (before, after), what it authored, and which turns were undone."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from tui_agent.core.agent.sessions import read_records
from tui_agent.core.undo.ignored import IgnoredRecord, from_json, to_json

CHECKPOINT = "checkpoint"
CHECKPOINT_END = "checkpoint_end"
UNDO = "undo"
REDO = "redo"


class Appender(Protocol):
    def append(self, record: dict[str, Any]) -> None: ...


@dataclass(frozen=True)
class Authored:
    """A tool or recipe a turn created or updated (`commit` is None when the commit was deferred)."""

    kind: str
    name: str
    created: bool
    commit: str | None


@dataclass(frozen=True)
class CallWindow:
    """Checkpoints before and after one call; `paths` (repository paths) when the call can only write those
    (`write_file`, `edit_file`): other files changed meanwhile are someone else's."""

    before: str
    after: str
    paths: tuple[str, ...] | None = None


@dataclass
class TurnRecord:
    """One turn: its number in the session, its prompt, the checkpoints around it and what it authored."""

    turn: int
    prompt: str
    before: str
    after: str | None = None
    authored: list[Authored] = field(default_factory=list)
    undone: bool = False
    calls: list[CallWindow] | None = None
    """The checkpoints around each of the turn's calls that may write; None when not recorded (older sessions, or a
    checkpoint failed): then every change of the turn counts as the agent's."""
    ignored: list[IgnoredRecord] = field(default_factory=list)
    """The git-ignored files the turn's sandbox runs changed (no checkpoint holds them)."""
    set_aside: list[tuple[str, str]] = field(default_factory=list)
    """(repository path, where the run's version is) for files a run and someone else both changed: theirs kept."""
    submodules: dict[str, SubmoduleWindows] = field(default_factory=dict)
    """Each checked-out submodule's own checkpoints around the turn and its calls (path -> windows)."""


def load_turns(path: Path) -> list[TurnRecord]:
    """The turns recorded in a session file, oldest first; malformed records are skipped (the file is untrusted)."""
    turns: dict[int, TurnRecord] = {}
    for record in read_records(path):
        kind, number, listed = record.get("type"), record.get("turn"), record.get("turns")
        before, after = record.get("before"), record.get("after")
        if kind == CHECKPOINT and isinstance(number, int) and isinstance(before, str):
            turns[number] = TurnRecord(number, str(record.get("prompt", "")), before)
        elif kind == CHECKPOINT_END and isinstance(number, int) and number in turns and isinstance(after, str):
            turn = turns[number]
            turn.after = after
            turn.authored = _authored(record.get("authored"))
            turn.calls = _calls(record.get("calls"))
            turn.ignored = from_json(record.get("ignored"))
            turn.set_aside = _pairs(record.get("set_aside"))
            turn.submodules = submodules_from_json(record.get("submodules"))
        elif kind in (UNDO, REDO) and isinstance(listed, list):  # REDO: /redo right after an /undo (the TUI)
            for listed_turn in listed:
                if isinstance(listed_turn, int) and listed_turn in turns:
                    turns[listed_turn].undone = kind == UNDO
    return [turns[number] for number in sorted(turns)]


def _authored(raw: Any) -> list[Authored]:
    items: list[Authored] = []
    for item in raw if isinstance(raw, list) else []:
        if isinstance(item, dict) and item.get("kind") in ("tool", "recipe") and isinstance(item.get("name"), str):
            commit = item.get("commit")
            items.append(Authored(item["kind"], item["name"], bool(item.get("created")), commit if isinstance(commit, str) else None))
    return items


def _pairs(raw: Any) -> list[tuple[str, str]]:
    return [(item[0], item[1]) for item in raw if isinstance(item, list) and len(item) == 2
            and all(isinstance(part, str) for part in item)] if isinstance(raw, list) else []


def _calls(raw: Any) -> list[CallWindow] | None:
    if not isinstance(raw, list):
        return None
    calls: list[CallWindow] = []
    for item in raw:
        if not isinstance(item, list) or len(item) not in (2, 3) or not all(isinstance(sha, str) for sha in item[:2]):
            return None  # one malformed window: attribution cannot be trusted
        paths = item[2] if len(item) == 3 else None
        if paths is not None and not (isinstance(paths, list) and all(isinstance(p, str) for p in paths)):
            return None
        calls.append(CallWindow(item[0], item[1], tuple(paths) if paths is not None else None))
    return calls


def record_start(log: Appender, turn: int, prompt: str, before: str) -> None:
    log.append({"type": CHECKPOINT, "turn": turn, "prompt": prompt[:500], "before": before, "time": time.time()})


def record_end(log: Appender, turn: int, after: str, authored: list[Authored],
               calls: list[CallWindow] | None = None, ignored: list[IgnoredRecord] | None = None,
               set_aside: list[tuple[str, str]] | None = None,
               submodules: dict[str, SubmoduleWindows] | None = None) -> None:
    record: dict[str, Any] = {
        "type": CHECKPOINT_END, "turn": turn, "after": after, "time": time.time(),
        "authored": [{"kind": a.kind, "name": a.name, "created": a.created, "commit": a.commit} for a in authored]}
    if calls is not None:
        record["calls"] = [[c.before, c.after] + ([list(c.paths)] if c.paths is not None else []) for c in calls]
    if ignored:
        record["ignored"] = to_json(ignored)
    if set_aside:
        record["set_aside"] = [list(pair) for pair in set_aside]
    if submodules:
        record["submodules"] = {path: windows.to_json() for path, windows in submodules.items()}
    log.append(record)


def record_undo(log: Appender, turns: list[int]) -> None:
    log.append({"type": UNDO, "turns": turns, "time": time.time()})


def record_redo(log: Appender, turns: list[int]) -> None:
    log.append({"type": REDO, "turns": turns, "time": time.time()})


@dataclass
class SubmoduleWindows:
    """One submodule's checkpoints (trees in its own repository) around a turn and around each of its calls."""

    before: str
    after: str = ""
    calls: list[CallWindow] | None = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        calls = None if self.calls is None else [
            [c.before, c.after] + ([list(c.paths)] if c.paths is not None else []) for c in self.calls]
        return {"before": self.before, "after": self.after, "calls": calls}


def submodules_from_json(raw: Any) -> dict[str, SubmoduleWindows]:
    """The `submodules` of a turn's end record (hostile input: anything malformed is left out)."""
    found: dict[str, SubmoduleWindows] = {}
    for path, item in (raw.items() if isinstance(raw, dict) else []):
        if not (isinstance(path, str) and isinstance(item, dict) and isinstance(item.get("before"), str)
                and isinstance(item.get("after"), str)):
            continue
        raw_calls = item.get("calls")
        calls: list[CallWindow] | None = [] if isinstance(raw_calls, list) else None
        for call in raw_calls if isinstance(raw_calls, list) else []:
            if calls is not None and (isinstance(call, list) and len(call) in (2, 3)
                                      and all(isinstance(sha, str) for sha in call[:2])
                                      and (len(call) == 2 or (isinstance(call[2], list)
                                                              and all(isinstance(p, str) for p in call[2])))):
                calls.append(CallWindow(call[0], call[1], tuple(call[2]) if len(call) == 3 else None))
            else:
                calls = None  # one malformed window: attribution cannot be trusted
        found[path] = SubmoduleWindows(item["before"], item["after"], calls)
    return found
