"""UndoService: records a checkpoint around every agent turn, and undoes the last turn (or rewinds to an earlier one)."""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from tui_agent.core.catalog.errors import PipelineError
from tui_agent.core.errors import PROJECT_FAILURES
from tui_agent.core.events import Event, ToolAuthored, ToolCallFinished, ToolCallStarted
from tui_agent.core.agent.paths import PathRefused, confine
from tui_agent.core.sandbox.attribution import RunWrites
from tui_agent.core.sandbox.ignored import IgnoredChange
from tui_agent.core.undo.ignored import NotUndone, summary, to_records, undo_ignored
from tui_agent.core.undo.journal import Authored, CallWindow, TurnRecord, load_turns, record_end, record_start, record_undo
from tui_agent.core.undo.plan import UnrecordedTurn, plan_undo
from tui_agent.core.undo.restore import RestoreError, apply_changes
from tui_agent.core.versioning.checkpoints import Checkpoints, GitFailure
from tui_agent.core.versioning.gitqueries import HistoryEntry


READ_ONLY_CALLS = frozenset({"read_file", "list_files", "grep", "search_tools"})
"""Built-in calls that never write: no checkpoint around them. Every other call (a write, a shell run, run_python, a
catalog tool) is checkpointed before and after, so what it changed is told apart from what changed between calls."""


PATH_CALLS = frozenset({"write_file", "edit_file"})
"""Calls that write only the file their `path` names: a change to any other file during them is someone else's."""

SANDBOX_CALLS = frozenset({"run_shell", "run_python"})
"""Calls whose only way to write the project is a sandboxed run: with no writable run, they wrote nothing."""


class Session(Protocol):
    path: Path

    def append(self, record: dict[str, Any]) -> None: ...


class IgnoredSource(Protocol):
    """The sandbox: the git-ignored files its writable runs changed since it was last asked."""

    def take_ignored_changes(self) -> list[IgnoredChange]: ...


@runtime_checkable
class RunSource(Protocol):
    """The sandbox: what each writable run wrote since it was last asked (exactly, through an overlay, or unknown)."""

    def take_run_writes(self) -> list[RunWrites]: ...


class VersionedStore(Protocol):
    """The catalog or the recipe engine: what undo needs to take a tool or recipe back."""

    def history(self, name: str) -> list[HistoryEntry]: ...
    async def revert(self, name: str, rev: str | None = None) -> Any: ...
    async def prune(self, name: str) -> Any: ...


@dataclass
class UndoResult:
    """What an undo did: `ok` False means nothing in the work tree was changed (`conflict_diff` says why)."""

    ok: bool
    message: str
    restored: list[str] = field(default_factory=list)
    catalog: list[str] = field(default_factory=list)
    conflict_diff: str = ""
    kept: list[str] = field(default_factory=list)
    """Files changed during the turns but not by the agent's calls: left as they are."""
    ignored_restored: list[str] = field(default_factory=list)
    """Git-ignored files the turns' runs changed, put back (a created one removed)."""
    ignored_not_undone: list[NotUndone] = field(default_factory=list)
    """Git-ignored files the turns' runs changed that undo left as they are, each with the reason."""

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "message": self.message, "restored": self.restored, "catalog": self.catalog,
                "kept": self.kept, "conflict_diff": self.conflict_diff, "ignored_restored": self.ignored_restored,
                "ignored_not_undone": [item.to_json() for item in self.ignored_not_undone]}

    @property
    def note_for_model(self) -> str:
        """What the model is told before its next request, so that it does not redo what was undone."""
        return (f"[tuiagent: the user undid your changes. {self.message} The conversation above still shows them; "
                "do not make them again unless the user asks.]")


class UndoService:
    """Turn checkpoints for one project; the catalog and recipe stores take back what turns authored."""

    def __init__(self, checkpoints: Checkpoints, *, catalog: VersionedStore | None = None,
                 recipes: VersionedStore | None = None, ignored: IgnoredSource | None = None,
                 runs: RunSource | None = None) -> None:
        self.checkpoints = checkpoints
        self.ignored = ignored
        self.runs = runs if runs is not None else (ignored if isinstance(ignored, RunSource) else None)
        self.catalog = catalog
        self.recipes = recipes
        self._open_turn: int | None = None
        self._authored: list[Authored] = []
        self._calls: list[CallWindow] | None = []
        self._set_aside: list[tuple[str, str]] = []
        self._call_open: tuple[str, str, tuple[str, ...] | None, str] | None = None  # (id, before, paths, name)
        self.problems: list[str] = []  # checkpoints that failed; the agent loop tells the person and clears it
        self.last_turn: tuple[str, str] | None = None  # (before, after) of the last turn that ended checkpointed
        self._turn_before = ""

    # ------------------------------------------------------------------ recording (called by the agent loop)

    async def begin(self, session: Session, prompt: str) -> None:
        self.last_turn = None
        try:
            before = await asyncio.to_thread(self.checkpoints.snapshot)
        except (GitFailure, OSError) as error:  # e.g. a read-only repository: the turn goes on, without its undo
            self._open_turn = None
            self.problems.append(f"this turn cannot be undone: the work tree could not be checkpointed ({error})")
            return
        number = max((turn.turn for turn in load_turns(session.path)), default=0) + 1 if session.path.exists() else 1
        record_start(session, number, prompt, before)
        if self.ignored is not None:
            self.ignored.take_ignored_changes()  # runs before this turn (a manual tool run) are not the turn's
        self._take_runs()
        self._turn_before = before
        self._open_turn, self._authored, self._calls, self._call_open = number, [], [], None
        self._set_aside = []

    def observe(self, event: Event) -> None:
        if isinstance(event, ToolAuthored) and self._open_turn is not None:
            self._authored.append(Authored(event.kind, event.name, event.created, event.commit))

    async def around_call(self, event: Event) -> None:
        """A checkpoint before a call that may write starts and after it ends (the loop awaits it, so the call has
        not begun yet / has finished): what changed in between is the agent's, the rest is not."""
        if self._open_turn is None or self._calls is None:
            return
        if isinstance(event, ToolCallStarted) and event.name not in READ_ONLY_CALLS:
            before = await self._call_checkpoint()
            self._take_runs()  # runs before this call are not its own
            if before is not None:
                self._call_open = (event.call_id, before, self._written_paths(event), event.name)
        elif isinstance(event, ToolCallFinished) and self._call_open is not None and self._call_open[0] == event.call_id:
            after = await self._call_checkpoint()
            if after is not None and self._calls is not None:
                self._calls.append(self._window(self._call_open, after))
            self._call_open = None

    def _window(self, call: tuple[str, str, tuple[str, ...] | None, str], after: str) -> CallWindow:
        """The call's window; a shell or tool run's `paths` are exactly what its sandboxed runs wrote when the sandbox
        could tell (an overlay), so a change someone else made to another file while it ran is kept."""
        _call_id, before, paths, name = call
        runs = self._take_runs()
        self._set_aside += [(self.checkpoints.prefix + path, where) for run in runs for path, where in run.aside]
        if paths is None and all(run.attributed for run in runs) and (runs or name in SANDBOX_CALLS):
            paths = tuple(sorted({self.checkpoints.prefix + path for run in runs for path in run.paths}))
        return CallWindow(before, after, paths)

    def _take_runs(self) -> list[RunWrites]:
        return self.runs.take_run_writes() if self.runs is not None else []

    def _written_paths(self, event: ToolCallStarted) -> tuple[str, ...] | None:
        """The repository path a `write_file`/`edit_file` call can write; None (any file) for every other call."""
        raw = event.arguments.get("path")
        if event.name not in PATH_CALLS or not isinstance(raw, str):
            return None
        work_tree = self.checkpoints.work_tree
        try:
            real = confine(work_tree / self.checkpoints.prefix, raw)
            return (real.relative_to(work_tree.resolve()).as_posix(),)
        except (PathRefused, ValueError, OSError):
            return None

    async def _call_checkpoint(self) -> str | None:
        try:
            return await asyncio.to_thread(self.checkpoints.snapshot)
        except (GitFailure, OSError) as error:  # attribution is lost for this turn: undo treats every change as the agent's
            self._calls, self._call_open = None, None
            self.problems.append(f"a call of this turn could not be checkpointed ({error}); undo will take back every "
                                 "change the turn saw, yours included")
            return None

    async def end(self, session: Session) -> None:
        if self._open_turn is None:
            return
        number, self._open_turn = self._open_turn, None
        try:
            after = await asyncio.to_thread(self.checkpoints.snapshot)
        except (GitFailure, OSError) as error:  # the turn's end is checkpointed when /undo runs instead
            self.problems.append(f"the end of this turn could not be checkpointed ({error})")
            return
        calls = self._calls
        if calls is not None and self._call_open is not None:  # cancelled mid-call: the call ran until now
            calls = [*calls, self._window(self._call_open, after)]
        self._call_open = None
        changes = self.ignored.take_ignored_changes() if self.ignored is not None else []
        ignored = await asyncio.to_thread(to_records, self.checkpoints, changes) if changes else []
        record_end(session, number, after, self._authored, calls, ignored, self._set_aside)
        self.last_turn = (self._turn_before, after)

    # ------------------------------------------------------------------ queries

    def last_turn_paths(self) -> list[str] | None:
        """The files (repository paths, `.agent/` left out) the last turn changed, from its own checkpoints; None when
        it was not checkpointed (headless reports them as `edited_files`)."""
        if self.last_turn is None:
            return None
        try:
            return self.checkpoints.changed_paths(*self.last_turn)
        except (GitFailure, OSError):
            return None

    def turns(self, session: Session) -> list[TurnRecord]:
        """The session's recorded turns, oldest first (undone ones included, marked)."""
        return load_turns(session.path) if session.path.exists() else []

    async def turn_diff(self, session: Session, number: int | None = None) -> str | None:
        """The changes a turn made to project files (by any tool, shell commands included); None: no such turn."""
        turns = [turn for turn in self.turns(session) if number is None or turn.turn == number]
        if not turns or not self.checkpoints.is_tree(turns[-1].before):
            return None
        turn = turns[-1]
        after = turn.after if turn.after and self.checkpoints.is_tree(turn.after) else await asyncio.to_thread(self.checkpoints.snapshot)
        return await asyncio.to_thread(self.checkpoints.diff, turn.before, after)

    # ------------------------------------------------------------------ undo

    async def undo_last(self, session: Session) -> UndoResult:
        live = [turn for turn in self.turns(session) if not turn.undone]
        if not live:
            return UndoResult(False, "Nothing to undo: no agent turn recorded in this session (or all undone).")
        return await self._undo(session, live[-1:])

    async def rewind(self, session: Session, number: int) -> UndoResult:
        """Undo turn `number` and every later turn not undone yet, as one step."""
        live = [turn for turn in self.turns(session) if not turn.undone and turn.turn >= number]
        if not live or live[0].turn != number:
            return UndoResult(False, f"Turn {number} is not in this session or was already undone.")
        return await self._undo(session, live)

    async def _undo(self, session: Session, turns: list[TurnRecord]) -> UndoResult:
        bad = [turn.turn for turn in turns
               for sha in (turn.before, turn.after, *(s for c in turn.calls or () for s in (c.before, c.after)))
               if sha and not self.checkpoints.is_tree(sha)]
        if bad:
            return UndoResult(False, f"The checkpoint of turn {bad[0]} is missing from git's objects; cannot undo it.")
        label = _label(turns)
        try:
            now = await asyncio.to_thread(self.checkpoints.snapshot)
            plan = await asyncio.to_thread(plan_undo, self.checkpoints, turns, now)
            if not plan.ok:
                files = ", ".join(plan.conflict_paths)
                return UndoResult(False, f"Not undone: you changed {files} after turn {plan.conflict_turn}; tuiagent does "
                                         "not overwrite your changes. Their diff is shown; revert them first or keep them.",
                                  conflict_diff=plan.conflict_diff)
            restored = await asyncio.to_thread(apply_changes, self.checkpoints, plan.changes())
            ignored_back, ignored_left = await asyncio.to_thread(
                undo_ignored, self._project_root(), self.checkpoints, [turn.ignored for turn in turns])
        except (UnrecordedTurn, RestoreError, GitFailure, OSError) as error:
            return UndoResult(False, f"Not undone: {error}")
        catalog = await self._take_back_authored(turns, self.turns(session))
        record_undo(session, [turn.turn for turn in turns])
        files = f"{len(restored)} file(s) put back: {', '.join(restored)}" if restored else "no project file to put back"
        kept = (f" Kept as they are: {', '.join(plan.kept)} (changed by someone else during the turn, you or another "
                "program, not by the agent's calls; undo takes back only what the agent changed)." if plan.kept else "")
        ignored = summary(ignored_back, ignored_left)
        aside = [f"{path} (in {where})" for turn in turns for path, where in turn.set_aside]
        kept += (f" The run's own versions of files you changed meanwhile were set aside: {', '.join(aside)}."
                 if aside else "")
        return UndoResult(True, f"Undid {label}: {files}." + (" " + "; ".join(catalog) + "." if catalog else "") + kept
                          + (" " + ignored if ignored else ""), restored, catalog, kept=plan.kept,
                          ignored_restored=ignored_back, ignored_not_undone=ignored_left)

    def _project_root(self) -> Path:
        return Path(os.path.realpath(self.checkpoints.work_tree / self.checkpoints.prefix))

    async def _take_back_authored(self, turns: list[TurnRecord], session_turns: list[TurnRecord]) -> list[str]:
        """Prune what the turns created, revert what they updated to the version before them (through the stores);
        a tool or recipe someone changed since (it holds none of the versions the agent wrote) is kept."""
        first: dict[tuple[str, str], Authored] = {}
        for turn in turns:
            for item in turn.authored:
                first.setdefault((item.kind, item.name), item)
        done: list[str] = []
        for (kind, name), item in reversed(list(first.items())):
            store = self.catalog if kind == "tool" else self.recipes
            if store is None:
                done.append(f"{kind} {name} NOT taken back (the {kind} store is not open)")
                continue
            agent_versions = {a.commit for turn in session_turns for a in turn.authored
                              if (a.kind, a.name) == (kind, name) and a.commit}
            if _changed_by_someone_else(store, name, agent_versions):
                done.append(f"{kind} {name} kept as it is: it was changed after the agent wrote it (its history has "
                            "the agent's versions)")
                continue
            try:
                if item.created:
                    await store.prune(name)
                    done.append(f"{kind} {name} pruned (/restore brings it back)")
                else:
                    await store.revert(name, _version_before(store, name, item.commit))
                    done.append(f"{kind} {name} reverted to its version before the turn")
            except PROJECT_FAILURES as error:  # the files are back, say what is left
                done.append(f"{kind} {name} NOT taken back: {error.message if isinstance(error, PipelineError) else error}")
        return done


def _changed_by_someone_else(store: VersionedStore, name: str, agent_versions: set[str]) -> bool:
    """Whether the file holds none of the versions the agent committed (an empty diff from one means it does)."""
    diff = getattr(store, "diff", None)
    if diff is None or not agent_versions:
        return False  # nothing to compare with (a deferred commit): take it back as before
    for commit in agent_versions:
        try:
            if diff(name, commit) == "":
                return False
        except PROJECT_FAILURES:  # that version cannot be read; try the others
            continue
    return True


def _version_before(store: VersionedStore, name: str, commit: str | None) -> str | None:
    """The commit holding the version just before `commit`; None lets the store pick its previous version."""
    if commit is None:
        return None
    history = [entry for entry in store.history(name) if not entry.deleted]
    for index, entry in enumerate(history):
        if entry.rev == commit and index + 1 < len(history):
            return history[index + 1].rev
    return None


def _label(turns: list[TurnRecord]) -> str:
    if len(turns) == 1:
        return f"turn {turns[0].turn} ({turns[0].prompt[:50]!r})"
    return f"turns {turns[0].turn}-{turns[-1].turn}"
