"""`/redo` right after `/undo` or `/rewind`: the work tree put back as it was just before the undo (never over the
person's later edits), what the undo pruned restored and what it reverted reverted back, the journal told."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tui_agent.core.errors import PROJECT_FAILURES

if TYPE_CHECKING:
    from tui_agent.core.agent.sessions import SessionLog
    from tui_agent.core.versioning.store_interface import VersionedStore
    from tui_agent.core.undo.journal import TurnRecord
    from tui_agent.core.undo.service import UndoService


@dataclass
class RedoPoint:
    """What an undo changed, kept to take it back: the work tree just before and just after it, and each authored
    item's newest commit before it (None for one the turns created: the undo pruned it, a restore brings it back)."""

    turns: list[TurnRecord]
    before_undo: str
    after_undo: str = ""
    heads: dict[tuple[str, str], str | None] = field(default_factory=dict)


StoreOf = Callable[[str], "VersionedStore | None"]
"""The versioned store of a kind ("tool" or "recipe"): `runtime.store`."""


@dataclass(frozen=True)
class RedoResult:
    ok: bool
    message: str
    conflict_diff: str = ""


async def before_undo(undo: UndoService, turns: list[TurnRecord], store_of: StoreOf) -> RedoPoint:
    """Checkpoint the work tree and note each authored item's newest commit, right before the undo runs."""
    point = RedoPoint(turns, await asyncio.to_thread(undo.checkpoints.snapshot))
    for turn in turns:
        for item in turn.authored:
            store = store_of(item.kind)
            history = [entry for entry in store.history(item.name) if not entry.deleted] if store is not None else []
            point.heads.setdefault((item.kind, item.name), None if item.created or not history else history[0].rev)
    return point


async def after_undo(undo: UndoService, point: RedoPoint) -> RedoPoint:
    point.after_undo = await asyncio.to_thread(undo.checkpoints.snapshot)
    return point


def redo_refusal(undo: UndoService, session: SessionLog, point: RedoPoint | None) -> str | None:
    """Why there is nothing to redo now (None: the last undo can be redone)."""
    if point is None or not point.after_undo:
        return "Nothing to redo: /redo takes back the last /undo or /rewind of this session."
    newest = max((turn.turn for turn in undo.turns(session)), default=0)
    if newest > max(turn.turn for turn in point.turns):
        return "Nothing to redo: a turn ran since the undo (its changes build on the undone state)."
    return None


async def redo(undo: UndoService, session: SessionLog, point: RedoPoint, store_of: StoreOf) -> RedoResult:
    """Put back what the undo changed, unless the person changed those files since (then their diff, nothing done)."""
    from tui_agent.core.undo.journal import TurnRecord, record_redo
    from tui_agent.core.undo.plan import plan_undo
    from tui_agent.core.undo.restore import apply_changes

    the_undo = TurnRecord(0, "undo", before=point.before_undo, after=point.after_undo)  # redo = undoing the undo
    now = await asyncio.to_thread(undo.checkpoints.snapshot)
    plan = await asyncio.to_thread(plan_undo, undo.checkpoints, [the_undo], now)
    if not plan.ok:
        files = ", ".join(plan.conflict_paths)
        return RedoResult(False, f"Not redone: you changed {files} since the undo; tuiagent does not overwrite your changes.",
                          plan.conflict_diff)
    restored = await asyncio.to_thread(apply_changes, undo.checkpoints, plan.changes())
    catalog: list[str] = []
    for (kind, name), head in point.heads.items():
        store = store_of(kind)
        if store is None:
            catalog.append(f"{kind} {name} NOT brought back (the {kind} store is not open)")
            continue
        try:
            if head is None:
                await store.restore(name)
                catalog.append(f"{kind} {name} restored")
            else:
                await store.revert(name, head)
                catalog.append(f"{kind} {name} back at {head[:8]}")
        except PROJECT_FAILURES as error:  # the files are back, say what is left
            catalog.append(f"{kind} {name} NOT brought back: {error}")
    record_redo(session, [turn.turn for turn in point.turns])
    label = f"turn {point.turns[0].turn}" if len(point.turns) == 1 else f"turns {point.turns[0].turn}-{point.turns[-1].turn}"
    files = f"{len(restored)} file(s) put back: {', '.join(restored)}" if restored else "no project file to put back"
    return RedoResult(True, f"Redid {label}: {files}." + (" " + "; ".join(catalog) + "." if catalog else ""))
