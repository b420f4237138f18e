"""Repeated call chains mined from session transcripts: the evidence behind a suggested tool."""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tui_agent.core.agent.sessions import read_records
from tui_agent.core.content import JsonObject

# Calls that edit, author or look up rather than compute: a chain of them is not a tool.
NOT_WORKFLOW_STEPS = frozenset({
    "write_file", "edit_file", "create_tool", "create_recipe", "prune_tool", "search_tools",
})
# Calls that only move around the project; a two-step chain made of one of these is ordinary reading.
NAVIGATION_STEPS = frozenset({"read_file", "list_files"})
MAX_CHAIN = 6
MIN_THREADED_LENGTH = 3


@dataclass(frozen=True)
class Call:
    """One successful tool call the model made, in transcript order."""

    tool: str
    arguments: JsonObject
    time: float
    session: str
    position: int


@dataclass(frozen=True)
class Occurrence:
    """Where one repetition of a chain ran."""

    session: str
    started: float
    calls: tuple[Call, ...]


@dataclass
class Chain:
    """A sequence of calls seen at least twice, with what stayed fixed and what varied."""

    steps: tuple[str, ...]
    occurrences: list[Occurrence]
    parameters: list[list[str]] = field(default_factory=list)  # each: the slots ("2.pattern") sharing one varying value
    fixed: dict[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return hashlib.sha256("→".join(self.steps).encode()).hexdigest()[:12]

    @property
    def count(self) -> int:
        return len(self.occurrences)

    @property
    def last_seen(self) -> float:
        return max(occurrence.started for occurrence in self.occurrences)

    @property
    def sessions(self) -> list[str]:
        return sorted({occurrence.session for occurrence in self.occurrences})

    def varied_values(self) -> list[list[Any]]:
        """For each parameter, the value it had in each occurrence."""
        return [[_slot_value(occurrence, slots[0]) for occurrence in self.occurrences] for slots in self.parameters]

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id, "steps": list(self.steps), "count": self.count, "sessions": self.sessions,
            "last_seen": self.last_seen, "parameters": self.parameters, "varied_values": self.varied_values(),
            "fixed": self.fixed,
        }


def calls_in_session(path: Path) -> list[Call]:
    """The session's successful workflow calls, in order (failed and authoring calls left out)."""
    started: dict[str, tuple[str, JsonObject, float]] = {}
    calls: list[Call] = []
    for record in read_records(path):
        data, kind = record.get("data"), record.get("event")
        if record.get("type") != "event" or not isinstance(data, dict):
            continue
        call_id, arguments = str(data.get("call_id", "")), data.get("arguments")
        if kind == "ToolCallStarted" and isinstance(arguments, dict):
            started[call_id] = (str(data.get("name", "")), arguments, _number(record.get("time")))
        elif kind == "ToolCallFinished" and call_id in started:
            tool, arguments, moment = started.pop(call_id)
            if not data.get("is_error") and tool not in NOT_WORKFLOW_STEPS:
                calls.append(Call(tool, arguments, moment, path.stem, len(calls)))
    return calls


def find_chains(calls_by_session: Iterable[Sequence[Call]]) -> list[Chain]:
    """Chains repeated at least twice whose varying arguments thread through the steps, longest first."""
    candidates: dict[tuple[Any, ...], list[Occurrence]] = defaultdict(list)
    for calls in calls_by_session:
        for length in range(MAX_CHAIN, 1, -1):
            _collect(calls, length, candidates)
    chains = [chain for signature, occurrences in candidates.items()
              if (chain := _analyse(signature, occurrences)) is not None]
    return _drop_contained(sorted(chains, key=lambda chain: (-len(chain.steps), -chain.count, chain.steps)))


def _collect(calls: Sequence[Call], length: int, into: dict[tuple[Any, ...], list[Occurrence]]) -> None:
    last_end: dict[tuple[Any, ...], int] = {}
    for start in range(len(calls) - length + 1):
        window = tuple(calls[start:start + length])
        signature = tuple((call.tool, tuple(sorted(call.arguments))) for call in window)
        if start < last_end.get(signature, 0):
            continue  # overlapping repetition inside one session
        last_end[signature] = start + length
        into[signature].append(Occurrence(window[0].session, window[0].time, window))


def _analyse(signature: tuple[Any, ...], occurrences: list[Occurrence]) -> Chain | None:
    if len(occurrences) < 2:
        return None
    steps = tuple(tool for tool, _ in signature)
    slots = [f"{index}.{key}" for index, (_, keys) in enumerate(signature) for key in keys]
    fixed = {slot: _slot_value(occurrences[0], slot) for slot in slots
             if all(_slot_value(o, slot) == _slot_value(occurrences[0], slot) for o in occurrences)}
    varying = [slot for slot in slots if slot not in fixed]
    parameters = _threaded_parameters(varying, occurrences)
    if not _is_workflow(steps, varying, parameters, len(occurrences)):
        return None
    return Chain(steps, occurrences, parameters, fixed)


def _threaded_parameters(varying: list[str], occurrences: list[Occurrence]) -> list[list[str]]:
    """Group varying slots by a value they share in every occurrence (one slot's value inside another's)."""
    groups: list[list[str]] = []
    for slot in varying:
        for group in groups:
            if all(_linked(_slot_value(o, group[0]), _slot_value(o, slot)) for o in occurrences):
                group.append(slot)
                break
        else:
            groups.append([slot])
    return groups


def _is_workflow(steps: tuple[str, ...], varying: list[str], parameters: list[list[str]], count: int) -> bool:
    if len(set(steps)) == 1 and len(steps) == 2:
        return False  # one tool twice in a row is a retry or a scan, not a workflow
    threaded = any(len({slot.split(".")[0] for slot in group}) > 1 for group in parameters)
    if not varying:
        return len(steps) >= MIN_THREADED_LENGTH and count >= 3
    if not threaded or len(parameters) > 2:
        return False
    if len(steps) == 2 and NAVIGATION_STEPS & set(steps):
        return False
    return len(steps) >= MIN_THREADED_LENGTH or count >= 2


def _drop_contained(chains: list[Chain]) -> list[Chain]:
    """A shorter chain found inside a longer kept one, at the same places, is the same evidence."""
    kept: list[Chain] = []
    for chain in chains:
        places = _places(chain)
        if any(places <= _places(other) for other in kept):
            continue
        kept.append(chain)
    return kept


def _places(chain: Chain) -> set[tuple[str, int]]:
    return {(call.session, call.position) for occurrence in chain.occurrences for call in occurrence.calls}


def _linked(first: Any, second: Any) -> bool:
    if first == second:
        return True
    a, b = _as_text(first), _as_text(second)
    return bool(a and b) and len(min(a, b, key=len)) >= 3 and (a in b or b in a)


def _slot_value(occurrence: Occurrence, slot: str) -> Any:
    index, key = slot.split(".", 1)
    return occurrence.calls[int(index)].arguments.get(key)


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)


def _number(value: Any) -> float:
    return float(value) if isinstance(value, int | float) else 0.0
