"""UndoService: records a checkpoint around every agent turn, and undoes the last turn (or rewinds to an earlier one)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from tui_agent.core.sharedfile import SharedFileBusy
from tui_agent.core.events import Event, ToolAuthored, ToolCallFinished, ToolCallStarted
from tui_agent.core.agent.paths import PathRefused, confine
from tui_agent.core.sandbox import RunWrites
from tui_agent.core.sandbox import IgnoredChange
from tui_agent.core.undo.ignored import NotUndone, to_records
from tui_agent.core.undo.outcome import UndoResult, label, resumed_message, undone
from tui_agent.core.undo.journal import Authored, CallWindow, TurnRecord, load_turns, record_end, record_start
from tui_agent.core.undo import transaction
from tui_agent.core.undo.authored import VersionedStore, preview, take_back
from tui_agent.core.undo.plan import UndoPlan, UnrecordedTurn, agent_paths, plan_undo
from tui_agent.core.undo.submodules import SubmoduleRecorder, apply_submodules, plan_submodules
from tui_agent.core.undo.transaction import Intent, Progress, Resumed, intent_file, read_intent
from tui_agent.core.undo.restore import RestoreError
from tui_agent.core.versioning.checkpoints import Checkpoints, GitFailure


READ_ONLY_CALLS = frozenset({"read_file", "list_files", "grep", "search_tools"})
"""Built-in calls that never write: no checkpoint around them (nor around a catalog tool without WRITES, see
`writes_nothing`). Every other call (a write, a shell run, run_python, a WRITES tool) is checkpointed before and
after, so what it changed is told apart from what changed between calls."""


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
        self._last_calls: list[CallWindow] | None = None
        self._turn_before = ""
        self.progress: Progress | None = None
        """Told (files done, files in all) every few hundred files of a large undo, from a worker thread."""
        self.finished_at_open: str | None = None
        """What finish_interrupted completed (an undo a killed process left part-way), for `tuiagent --undo`."""
        self.submodules = SubmoduleRecorder(checkpoints)
        self.writes_nothing: Callable[[str, dict[str, Any]], bool] | None = None
        """Set by the runtime: whether a call cannot change the project (a read-only catalog tool): no checkpoint."""
        self._unwatched: str | None = None  # the id of such a call while it runs
        self._may_have_written = False  # whether the open turn started a tool call that can change the project

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
        await asyncio.to_thread(self.submodules.begin)
        if self.ignored is not None:
            self.ignored.take_ignored_changes()  # runs before this turn (a manual tool run) are not the turn's
        self._take_runs()
        self._turn_before = before
        self._open_turn, self._authored, self._calls, self._call_open = number, [], [], None
        self._set_aside, self._may_have_written = [], False

    def observe(self, event: Event) -> None:
        if isinstance(event, ToolCallStarted) and event.name not in READ_ONLY_CALLS and not self._writes_nothing(event):
            self._may_have_written = True
        if isinstance(event, ToolAuthored) and self._open_turn is not None:
            self._authored.append(Authored(event.kind, event.name, event.created, event.commit))

    async def around_call(self, event: Event) -> None:
        """A checkpoint before a call that may write starts and after it ends (the loop awaits it, so the call has
        not begun yet / has finished): what changed in between is the agent's, the rest is not."""
        if self._open_turn is None or self._calls is None:
            return
        if isinstance(event, ToolCallStarted) and self._writes_nothing(event):
            self._unwatched = event.call_id
        elif isinstance(event, ToolCallStarted) and event.name not in READ_ONLY_CALLS:
            before = await self._call_checkpoint()
            await asyncio.to_thread(self.submodules.call_started)
            self._take_runs()  # runs before this call are not its own
            if before is not None:
                self._call_open = (event.call_id, before, self._written_paths(event), event.name)
        elif isinstance(event, ToolCallFinished) and self._call_open is not None and self._call_open[0] == event.call_id:
            after = await self._call_checkpoint()
            window = self._window(self._call_open, after) if after is not None else None
            if window is not None and self._calls is not None:
                self._calls.append(window)
            await asyncio.to_thread(self.submodules.call_finished, window.paths if window is not None else None)
            self._call_open = None
        elif isinstance(event, ToolCallFinished) and event.call_id == self._unwatched:
            self._unwatched = None
            if self._take_runs():  # it ran writable after all (its tool gained WRITES meanwhile): nothing attributes it
                self._calls, self._call_open = None, None
                self.problems.append(f"{event.name} ran with the project writable but was not checkpointed; undo will "
                                     "take back every change the turn saw, yours included")

    def _writes_nothing(self, event: ToolCallStarted) -> bool:
        return self.writes_nothing is not None and self.writes_nothing(event.name, event.arguments)

    def _window(self, call: tuple[str, str, tuple[str, ...] | None, str], after: str) -> CallWindow:
        """The call's window; a shell or tool run's `paths` are exactly what its sandboxed runs wrote when the sandbox
        could tell (an overlay), so a change someone else made to another file while it ran is kept."""
        _call_id, before, paths, name = call
        runs = self._take_runs()
        self._set_aside += [(self.checkpoints.prefix + path, where) for run in runs for path, where in run.aside]
        if paths is None and all(run.attributed for run in runs) and (runs or name in SANDBOX_CALLS):
            paths = tuple(sorted({self.checkpoints.prefix + path for run in runs for path in run.paths}))
        return CallWindow(before, after, paths)

    def _quiet(self) -> bool:
        """The open turn started no tool call that can write (only reads: built-in ones, catalog tools without WRITES)
        and authored nothing: the agent changed no file in it, so a change seen during it is someone else's, as one
        made between turns is (its end is its start: no second snapshot)."""
        return not self._may_have_written and not self._authored and self._call_open is None and self._calls == []

    def _take_ignored(self) -> list[IgnoredChange]:
        return self.ignored.take_ignored_changes() if self.ignored is not None else []

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
        changes = self._take_ignored() if self._quiet() else None
        if changes is not None and not changes and not self._take_runs():
            after = self._turn_before  # nothing of the agent's ran: its end is its start (no second snapshot)
        else:
            try:
                after = await asyncio.to_thread(self.checkpoints.snapshot)
            except (GitFailure, OSError) as error:  # the turn's end is checkpointed when /undo runs instead
                self.problems.append(f"the end of this turn could not be checkpointed ({error})")
                return
        calls = self._calls
        if calls is not None and self._call_open is not None:  # cancelled mid-call: the call ran until now
            calls = [*calls, self._window(self._call_open, after)]
        self._call_open = None
        changes = [*(changes or []), *self._take_ignored()]
        ignored = await asyncio.to_thread(to_records, self.checkpoints, changes) if changes else []
        submodules = await asyncio.to_thread(self.submodules.end)
        moved = await asyncio.to_thread(self.submodules.moved_heads)
        if moved:
            self.problems.append(f"this turn made commits (or switched branches) in submodule(s) {', '.join(moved)}: "
                                 "/undo cannot take those back (it refuses rather than undo half the turn); use git "
                                 "in the submodule")
        record_end(session, number, after, self._authored, calls, ignored, self._set_aside, submodules)
        self.last_turn, self._last_calls = (self._turn_before, after), calls

    # ------------------------------------------------------------------ queries

    def last_turn_paths(self) -> list[str] | None:
        """The files (repository paths, `.agent/` left out) the last turn's own calls wrote, from its checkpoints
        (a file the person edited meanwhile is not the agent's); None when it was not checkpointed (headless reports
        them as `edited_files`)."""
        if self.last_turn is None:
            return None
        turn = TurnRecord(0, "", *self.last_turn, calls=self._last_calls)
        try:
            return agent_paths(self.checkpoints, turn) + self.submodules.last_paths(turn)
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
        if turn.after and self.checkpoints.is_tree(turn.after):  # only what the turn's calls wrote, not the person's
            paths = await asyncio.to_thread(agent_paths, self.checkpoints, turn)
            return await asyncio.to_thread(self.checkpoints.diff, turn.before, turn.after, paths)
        after = await asyncio.to_thread(self.checkpoints.snapshot)
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
        what = label(turns)
        pending = await self._finish_pending()  # an undo a killed process left part-way, completed first
        if isinstance(pending, tuple) and pending[0].intent.session == str(session.path) and \
                set(pending[0].intent.turns) == {turn.turn for turn in turns}:
            return UndoResult(True, pending[1], pending[0].restored)  # that very undo: finishing it is what was asked
        try:  # in one worker thread: cancelled (Esc, Ctrl-C), the files and the undo record still complete together
            done = await asyncio.to_thread(self._undo_files, session, turns)
        except SharedFileBusy:
            return UndoResult(False, "Not undone: another tuiagent is undoing in this project; try again when it is done.")
        except (UnrecordedTurn, RestoreError, GitFailure, OSError) as error:
            if intent_file(self._project_root()).exists():  # files were being put back: say so, never "not undone"
                return UndoResult(False, f"The undo of {what} stopped part-way ({error}): some files are back, the "
                                         "rest are not yet; run /undo again (or restart) to finish it. Nothing of "
                                         "yours is overwritten.")
            return UndoResult(False, f"Not undone: {error}")
        if isinstance(done, str):
            return UndoResult(False, done)
        if isinstance(done, Resumed):  # this very undo had been interrupted: finishing it is what was asked
            catalog = await self._finish_authored(done.turns, done.intent)
            return UndoResult(True, resumed_message(done, catalog), done.restored, catalog)
        plan, restored, (ignored_back, ignored_left), intent = done
        if not plan.ok:
            files = ", ".join(plan.conflict_paths)
            return UndoResult(False, f"Not undone: you changed {files} after turn {plan.conflict_turn}; tuiagent does "
                                     "not overwrite your changes. Their diff is shown; revert them first or keep them.",
                              conflict_diff=plan.conflict_diff)
        catalog = await self._finish_authored(turns, intent)
        return undone(turns, plan.kept, restored, catalog, ignored_back, ignored_left)

    def _undo_files(self, session: Session, turns: list[TurnRecord]) -> str | Resumed | tuple[
            UndoPlan, list[str], tuple[list[str], list[NotUndone]], Intent | None]:
        """Under the project's undo lock: finish an interrupted undo first, plan this one, then put the files back
        and record it as one transaction (transaction.apply_files); a message when the turns are undone already."""
        path = intent_file(self._project_root())
        with transaction.lock(path):
            resumed = self._roll_forward_locked(path)
            numbers = {turn.turn for turn in turns}
            if resumed is not None and resumed.intent.session == str(session.path) and set(resumed.intent.turns) == numbers:
                return resumed
            if any(turn.undone for turn in load_turns(session.path) if turn.turn in numbers):
                return "Not undone: an earlier undo (interrupted, now completed) or another tuiagent already undid it."
            now = self.checkpoints.snapshot()
            plan = plan_undo(self.checkpoints, turns, now)
            inside = plan_submodules(self.submodules, turns) if plan.ok else None
            if inside is not None and inside.unavailable:
                return (f"Not undone: the checkpoints inside submodule {inside.unavailable[0]} are gone (it was removed "
                        "or re-cloned since); nothing was changed.")
            if inside is not None and inside.conflict is not None:
                where, sub_plan = inside.conflict
                plan.conflict_turn, plan.conflict_diff = sub_plan.conflict_turn, sub_plan.conflict_diff
                plan.conflict_paths = [f"{where}/{inner}" for inner in sub_plan.conflict_paths]
            if not plan.ok:
                return plan, [], ([], []), None
            intent = Intent(str(session.path), sorted(numbers), now, submodules=inside.nows if inside else {})
            restored, ignored = transaction.apply_files(self.checkpoints, path, intent, plan, session,
                                                        self._project_root(), [turn.ignored for turn in turns],
                                                        self.progress, lambda: apply_submodules(inside, self.progress) if inside else [])
            return plan, restored, ignored, intent

    def _roll_forward_locked(self, path: Path) -> Resumed | None:
        intent = read_intent(path, self._project_root() / ".agent" / "sessions")
        if intent is None:
            transaction.clear_intent(path)
            return None
        return transaction.roll_forward(self.checkpoints, path, intent, self._project_root())

    async def finish_interrupted(self) -> str | None:
        """At start: complete an undo a killed process left part-way (its files, its record, its tools); a notice
        saying what was done, or None when there was none (or another process's live undo is still running)."""
        pending = await self._finish_pending()
        if isinstance(pending, tuple):
            self.finished_at_open = pending[1]
            return pending[1]
        return pending

    async def _finish_pending(self) -> tuple[Resumed, str] | str | None:
        """Roll a pending undo forward and take back its tools: (what was finished, the notice), a problem, or None."""
        path = intent_file(self._project_root())
        if not path.exists():
            return None

        def locked_roll() -> Resumed | None:
            with transaction.lock(path, transaction.RECOVERY_WAIT_S):
                return self._roll_forward_locked(path)

        try:
            resumed = await asyncio.to_thread(locked_roll)
        except SharedFileBusy:
            return None
        except (UnrecordedTurn, RestoreError, GitFailure, OSError) as error:
            return f"an undo interrupted earlier could not be finished ({error}); run /undo again to finish it"
        if resumed is None:
            return None
        return resumed, resumed_message(resumed, await self._finish_authored(resumed.turns, resumed.intent))

    async def _finish_authored(self, turns: list[TurnRecord], intent: Intent | None) -> list[str]:
        """Take back the tools and recipes the turns authored (each marked done in the intent as it goes), then
        close the transaction."""
        if intent is None:
            return []
        path = intent_file(self._project_root())
        session_turns = load_turns(Path(intent.session)) if Path(intent.session).exists() else turns

        def done(key: str) -> None:
            intent.authored_done.append(key)
            transaction.save_intent(path, intent)

        catalog = await take_back(self._stores(), turns, session_turns, set(intent.authored_done), done)
        transaction.clear_intent(path)
        return catalog

    def _project_root(self) -> Path:
        return Path(os.path.realpath(self.checkpoints.work_tree / self.checkpoints.prefix))

    def authored_preview(self, session: Session, turns: list[TurnRecord]) -> list[str]:
        """What undoing `turns` will do to each tool and recipe they authored, decided as the undo decides it."""
        return preview(self._stores(), turns, self.turns(session))

    def _stores(self) -> dict[str, VersionedStore | None]:
        return {"tool": self.catalog, "recipe": self.recipes}
