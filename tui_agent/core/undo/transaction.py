"""An undo as a transaction: its intent is written before any file is touched, so a process killed part-way has its
undo completed (rolled forward) by the next start, or by the next /undo, instead of leaving it half done.

The intent file (`.agent/cache/undo-intent.json`) names the session, the turns and the checkpoint taken just before
the undo; everything else (which file goes back to which content) is planned again from git's objects, so a forged
intent can only ask for an undo the session's own journal allows. Files, then the session's `undo` record (the
`stage` becomes "recorded"), then the tools and recipes the turns authored, each marked done as it is taken back."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tui_agent.core.sharedfile import locked, read_json, replace_text
from tui_agent.core.undo.ignored import IgnoredRecord, NotUndone, undo_ignored
from tui_agent.core.undo.journal import TurnRecord, load_turns, record_undo
from tui_agent.core.undo.plan import UndoPlan, plan_undo
from tui_agent.core.undo.restore import apply_changes, check_changes
from tui_agent.core.versioning.checkpoints import Checkpoints, Entry

INTENT_FILE = ".agent/cache/undo-intent.json"
LOCK_WAIT_S = 600.0
"""How long an undo waits for another process's undo of the same project (a 10,000-file undo takes ~20 s)."""
RECOVERY_WAIT_S = 2.0
"""How long a start waits to finish an interrupted undo: a live undo holding the lock finishes it itself."""

Progress = Callable[[int, int], None]


@dataclass
class Intent:
    """What an undo set out to do: the session file, its turns, the checkpoint before the undo and how far it got."""

    session: str
    turns: list[int]
    now: str
    stage: str = "files"
    """"files": the work tree may be part-way; "recorded": files done and the undo recorded, tools/recipes left."""
    authored_done: list[str] = field(default_factory=list)
    started: float = field(default_factory=time.time)
    submodules: dict[str, str] = field(default_factory=dict)
    """Each submodule's checkpoint (a tree in its own repository) just before the undo."""

    def to_json(self) -> dict[str, Any]:
        return {"session": self.session, "turns": self.turns, "now": self.now, "stage": self.stage,
                "authored_done": self.authored_done, "started": self.started, "submodules": self.submodules}


class Appender:
    """Appends records to a session file that this process may not have open (the interrupted undo's)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def append(self, record: dict[str, Any]) -> None:
        from tui_agent.core.appendfile import append_whole
        import json

        append_whole(self.path, (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8"))


def intent_file(project_root: Path) -> Path:
    return project_root / INTENT_FILE


def read_intent(path: Path, sessions_dir: Path) -> Intent | None:
    """The pending intent; None when there is none or it is malformed or names a file outside the sessions folder."""
    raw = read_json(path)
    if not isinstance(raw, dict):
        return None
    session, turns, now, stage = raw.get("session"), raw.get("turns"), raw.get("now"), raw.get("stage")
    done = raw.get("authored_done", [])
    if not (isinstance(session, str) and isinstance(now, str) and stage in ("files", "recorded")
            and isinstance(turns, list) and turns and all(isinstance(t, int) and not isinstance(t, bool) for t in turns)
            and isinstance(done, list) and all(isinstance(item, str) for item in done)):
        return None
    if Path(os.path.realpath(session)).parent != Path(os.path.realpath(sessions_dir)):
        return None
    subs = raw.get("submodules", {})
    subs = {k: v for k, v in subs.items() if isinstance(k, str) and isinstance(v, str)} if isinstance(subs, dict) else {}
    return Intent(session, list(turns), now, str(stage), list(done), float(raw.get("started", 0) or 0), subs)


def save_intent(path: Path, intent: Intent) -> None:
    import json

    replace_text(path, json.dumps(intent.to_json()), 0o600)


def clear_intent(path: Path) -> None:
    path.unlink(missing_ok=True)


def lock(path: Path, timeout_s: float = LOCK_WAIT_S) -> Any:
    """One undo of the project at a time, across processes (the lock file sits beside the intent, in the cache)."""
    return locked(path, timeout_s)


def apply_files(checkpoints: Checkpoints, path: Path, intent: Intent, plan: UndoPlan, session: Any, root: Path,
                ignored: list[list[IgnoredRecord]], progress: Progress | None = None,
                inside: Callable[[], list[str]] | None = None) -> tuple[list[str], tuple[list[str], list[NotUndone]]]:
    """Write the intent, put the files (and the git-ignored ones) back, record the undo in its session: one step a
    kill cannot split (the next start rolls it forward). Runs with the lock held."""
    check_changes(checkpoints, plan.changes())  # a refused path refuses the undo before anything is written
    save_intent(path, intent)
    restored = apply_changes(checkpoints, plan.changes(), progress)
    restored += inside() if inside is not None else []  # the files inside submodules
    ignored_done = undo_ignored(root, checkpoints, ignored)
    record_undo(session, intent.turns)
    intent.stage = "recorded"
    save_intent(path, intent)
    return restored, ignored_done


@dataclass
class Resumed:
    """What finishing an interrupted undo did: files put back, files left (changed by someone since), and the turns."""

    turns: list[TurnRecord]
    restored: list[str]
    left: list[str]
    intent: Intent


def roll_forward(checkpoints: Checkpoints, path: Path, intent: Intent, root: Path) -> Resumed | None:
    """Finish the files of an interrupted undo (lock held): each planned file still as before the undo is put back,
    one already back is left, one changed since (by the person after the crash) is kept; then record the undo.
    None when the session's journal does not allow that undo any more (the intent is dropped)."""
    every = load_turns(Path(intent.session)) if Path(intent.session).exists() else []
    turns = [turn for turn in every if turn.turn in intent.turns]
    if len(turns) != len(intent.turns) or not checkpoints.is_tree(intent.now):
        clear_intent(path)
        return None
    if intent.stage == "recorded" or all(turn.undone for turn in turns):
        intent.stage = "recorded"
        return Resumed(turns, [], [], intent)
    plan = plan_undo(checkpoints, turns, intent.now)
    if not plan.ok:
        clear_intent(path)
        return None
    restored, left = _finish(checkpoints, plan)
    for inner, (sub_checkpoints, sub_plan) in _submodule_plans(checkpoints, turns, intent).items():
        done, kept = _finish(sub_checkpoints, sub_plan)
        restored += [f"{inner}/{name}" for name in done]
        left += [f"{inner}/{name}" for name in kept]
    undo_ignored(root, checkpoints, [turn.ignored for turn in turns])
    record_undo(Appender(Path(intent.session)), intent.turns)
    intent.stage = "recorded"
    save_intent(path, intent)
    return Resumed(turns, restored, sorted(left), intent)


def _finish(checkpoints: Checkpoints, plan: UndoPlan) -> tuple[list[str], list[str]]:
    """Put back each planned file still as it was before the undo; (put back, changed by someone since: kept)."""
    wanted = plan.changes()
    current = checkpoints.entries(checkpoints.snapshot(), sorted(wanted))
    todo: dict[str, Entry | None] = {}
    left: list[str] = []
    for name, entry in wanted.items():
        now = current.get(name)
        if now == entry:
            continue
        if now == plan.current.get(name):
            todo[name] = entry
        else:
            left.append(name)
    return apply_changes(checkpoints, todo), sorted(left)


def _submodule_plans(checkpoints: Checkpoints, turns: list[TurnRecord],
                     intent: Intent) -> dict[str, tuple[Checkpoints, UndoPlan]]:
    """The interrupted undo's plan inside each submodule, from the submodule checkpoints taken before it."""
    from tui_agent.core.undo.submodules import Submodules, sub_turn

    submodules = Submodules(checkpoints)
    plans: dict[str, tuple[Checkpoints, UndoPlan]] = {}
    for inner, now in sorted(intent.submodules.items()):
        sub_checkpoints = submodules.checkpoints(inner)
        sub_turns = [sub_turn(turn, turn.submodules[inner]) for turn in turns if inner in turn.submodules]
        if sub_checkpoints is None or not sub_turns or not sub_checkpoints.is_tree(now):
            continue
        plan = plan_undo(sub_checkpoints, sub_turns, now)
        if plan.ok:
            plans[inner] = (sub_checkpoints, plan)
    return plans
