"""Planning an undo: the file contents to put back for a run of turns, or the files the user changed since (a conflict)."""

from __future__ import annotations

from dataclasses import dataclass, field

from tui_agent.core.errors import TuiAgentError
from tui_agent.core.undo.journal import TurnRecord
from tui_agent.core.versioning.checkpoints import Checkpoints, Entry


@dataclass
class UndoPlan:
    """`target` maps each path to put back to its entry before the turns (None: the file did not exist)."""

    turns: list[TurnRecord]
    target: dict[str, Entry | None] = field(default_factory=dict)
    current: dict[str, Entry] = field(default_factory=dict)
    conflict_turn: int | None = None
    conflict_paths: list[str] = field(default_factory=list)
    conflict_diff: str = ""
    kept: list[str] = field(default_factory=list)
    """Files changed during the turns outside the agent's calls (by the person or another program): not undone."""

    @property
    def ok(self) -> bool:
        return self.conflict_turn is None

    def changes(self) -> dict[str, Entry | None]:
        """Only the paths whose current content differs from what they go back to."""
        return {path: entry for path, entry in self.target.items() if self.current.get(path) != entry}


class UnrecordedTurn(TuiAgentError):
    """A turn's end was never recorded (the process died mid-turn): its changes cannot be told apart from the user's."""


def plan_undo(checkpoints: Checkpoints, turns: list[TurnRecord], now: str) -> UndoPlan:
    """Undo `turns` (oldest first) from the work tree checkpoint `now`, newest turn first, checking each on the way.

    A file a turn changed must still be as that turn left it (or as a later undone turn put it back); otherwise the
    person changed it since, and the plan stops there with the diff of their change.
    """
    plan = UndoPlan(turns)
    changed: dict[int, list[str]] = {}
    kept: set[str] = set()
    for turn in turns:
        changed[turn.turn], others = _changed(checkpoints, turn)
        kept.update(others)
    plan.kept = sorted(kept)
    every_path = sorted({path for paths in changed.values() for path in paths})
    plan.current = checkpoints.entries(now, every_path)
    state: dict[str, Entry | None] = {path: plan.current.get(path) for path in every_path}
    for turn in reversed(turns):
        paths = changed[turn.turn]
        before = checkpoints.entries(turn.before, paths)
        after = checkpoints.entries(str(turn.after), paths)
        moved = [path for path in paths if state[path] != after.get(path)]
        if moved:
            plan.conflict_turn, plan.conflict_paths = turn.turn, moved
            plan.conflict_diff = checkpoints.diff(str(turn.after), now, moved)
            return plan
        for path in paths:
            state[path] = before.get(path)
    plan.target = state
    return plan


def _changed(checkpoints: Checkpoints, turn: TurnRecord) -> tuple[list[str], list[str]]:
    """(files the turn's calls changed, files changed during the turn outside its calls): a file changed by both is
    the person's too, so it is kept."""
    if turn.after is None:
        raise UnrecordedTurn(f"turn {turn.turn} ({turn.prompt[:60]!r}) has no end checkpoint: it was interrupted before "
                             "tuiagent could record what it changed; /diff shows its changes, put them back by hand")
    every = set(checkpoints.changed_paths(turn.before, turn.after))
    if turn.calls is None:
        return sorted(every), []
    agent: set[str] = set()
    others: set[str] = set()
    for call in turn.calls:
        during = set(checkpoints.changed_paths(call.before, call.after))
        mine = during & set(call.paths) if call.paths is not None else during
        agent.update(mine)
        others.update(during - mine)
    points = [turn.before, *(sha for call in turn.calls for sha in (call.before, call.after)), turn.after]
    for start, end in zip(points[0::2], points[1::2], strict=True):
        if start != end:
            others.update(checkpoints.changed_paths(start, end))
    return sorted((agent - others) & every), sorted(others & every)


def agent_paths(checkpoints: Checkpoints, turn: TurnRecord) -> list[str]:
    """The files the turn's own calls wrote and that differ at its end (what a report may call the agent's edits);
    every change of the turn when its calls were not recorded."""
    every = set(checkpoints.changed_paths(turn.before, str(turn.after)))
    if turn.calls is None:
        return sorted(every)
    wrote: set[str] = set()
    for call in turn.calls:
        during = set(checkpoints.changed_paths(call.before, call.after))
        wrote.update(during & set(call.paths) if call.paths is not None else during)
    return sorted(wrote & every)
