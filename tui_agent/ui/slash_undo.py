"""`/undo`, `/rewind`, `/diff` and `/permissions`: the agent's turns taken back, shown, and the allow rules in force."""

from __future__ import annotations

import asyncio

from collections.abc import Awaitable
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Literal

from rich.markup import escape

from tui_agent.core.errors import PROJECT_FAILURES

from tui_agent.ui.redo import RedoPoint, after_undo, before_undo, redo_refusal
from tui_agent.ui.redo import redo as apply_redo
from tui_agent.ui.screens.confirm import ConfirmScreen
from tui_agent.ui.screens.pickers import Choice, ChoiceScreen
from tui_agent.core.runtime_state import agent_of

if TYPE_CHECKING:
    from tui_agent.core.agent.permissions import Permissions
    from tui_agent.core.agent.sessions import SessionLog
    from tui_agent.core.undo.journal import TurnRecord
    from tui_agent.core.undo.outcome import UndoResult
    from tui_agent.core.undo.service import UndoService
    from tui_agent.ui.command_registry import CommandRegistry
    from tui_agent.ui.host import UIHost
    from tui_agent.ui.turn import TurnRunner

TurnEditsAsked = Literal["asked", "turn_end", "question"]
"""Why a turn's edits are shown: /diff asked, the turn ended, or a question about the turn is on screen."""
NO_GIT = "Undo needs a git repository: turns are checkpointed in git's object store (the user's index and branches are never touched)."


class UndoCommands:
    """Slash commands over the core's UndoService (runtime.core.undo) and Permissions (runtime.core.permissions)."""

    def __init__(self, host: UIHost, turns: TurnRunner, registry: CommandRegistry) -> None:
        self.host = host
        self.turns = turns
        for name, handler in (("diff", self.diff), ("undo", self.undo), ("rewind", self.rewind), ("redo", self.redo),
                              ("permissions", self.permissions)):
            registry.add(name, handler)
        self.redo_point: RedoPoint | None = None
        """What the last /undo or /rewind changed, for /redo."""

    def _undo_parts(self) -> tuple[UndoService, SessionLog] | None:
        """The undo service and the session whose turns it takes back; None outside a git work tree (or still opening)."""
        runtime = self.host.runtime
        if runtime is None or runtime.core.undo is None or runtime.core.session is None:
            return None
        return runtime.core.undo, runtime.core.session

    async def _undo_ready(self, command: str) -> tuple[UndoService, SessionLog] | None:
        if self.turns.running:  # typed during a turn, it undoes that turn once it is over (esc cancels the turn sooner)
            self.turns.queue.push(command.strip(), "command")
            return None
        parts = self._undo_parts()
        if parts is None:
            await self.host.add_notice(NO_GIT, "warning")
        return parts

    async def undo(self, args: str) -> None:
        """Undo the last turn: its file changes (any tool, shell included) and what it authored in the catalog."""
        parts = await self._undo_ready(f"/undo {args}")
        if parts is not None:
            undo, session = parts
            live = [turn for turn in undo.turns(session) if not turn.undone]
            if live and not await self._confirm_undo(live[-1:]):
                return
            await self._undo_with_redo_point(undo, live[-1:], undo.undo_last(session))

    async def rewind(self, args: str) -> None:
        """Undo an earlier turn and every turn after it: `/rewind N`, or pick the turn from a list."""
        parts = await self._undo_ready(f"/rewind {args}")
        if parts is None:
            return
        undo, session = parts
        turns = [turn for turn in undo.turns(session) if not turn.undone]
        number = args.strip()
        if not number:
            choices = [Choice(str(turn.turn), f"turn {turn.turn:>3}  {turn.prompt[:70] or '(no prompt)'}") for turn in reversed(turns)]
            picked = await self.host.ask(ChoiceScreen("Rewind: undo this turn and every later one", choices,
                                                 empty="no turn to rewind in this session"))
            number = picked or ""
            if not number:
                return
        if not number.isdigit():
            await self.host.add_notice("Usage: /rewind [TURN NUMBER]", "warning")
            return
        taken_back = [turn for turn in turns if turn.turn >= int(number)]
        if taken_back and taken_back[0].turn == int(number) and not await self._confirm_undo(taken_back):
            return
        await self._undo_with_redo_point(undo, taken_back, undo.rewind(session, int(number)))

    async def _undo_with_redo_point(self, undo: UndoService, turns: list[TurnRecord], undoing: Awaitable[UndoResult]) -> None:
        """Run the undo, keeping what /redo needs to take it back."""
        store_of = self.host.runtime.store if self.host.runtime is not None else (lambda kind: None)
        try:
            point = await before_undo(undo, turns, store_of) if turns else None
        except PROJECT_FAILURES:  # no redo point (e.g. git failed): the undo itself still runs and says what it did
            point = None
        loop, notices = asyncio.get_running_loop(), set()

        def progress(done: int, total: int) -> None:  # from the undo's worker thread: a notice every few hundred files
            def show() -> None:
                task = asyncio.ensure_future(self.host.add_notice(f"Undo: {done} of {total} files put back…", "info"))
                notices.add(task)
                task.add_done_callback(notices.discard)

            loop.call_soon_threadsafe(show)

        undo.progress = progress
        try:
            result = await undoing
        finally:
            undo.progress = None
        self.redo_point = await after_undo(undo, point) if result.ok and point is not None else None
        await self._show_undo(result)

    async def redo(self, args: str) -> None:
        """Take back the last /undo or /rewind (right after it: no turn since), never over the person's later edits."""
        parts = await self._undo_ready(f"/redo {args}")
        if parts is None:
            return
        undo, session = parts
        refusal = redo_refusal(undo, session, self.redo_point)
        if refusal is not None or self.redo_point is None:
            await self.host.add_notice(refusal or "Nothing to redo.", "warning")
            return
        point = self.redo_point
        what = f"turn {point.turns[0].turn}" if len(point.turns) == 1 else f"turns {point.turns[0].turn} to {point.turns[-1].turn}"
        back = ", ".join(f"{kind} {name} ({'restored' if head is None else 'reverted back'})" for (kind, name), head in point.heads.items())
        question = (f"Redo {escape(what)}?\nThe files the undo put back get the turn's changes again" + (f"; {escape(back)}" if back else "")
                    + ".\nYour own edits since the undo are never overwritten.")
        answer = await self.host.ask(ConfirmScreen(question, yes="Redo", no="Keep"))
        if not answer:
            return
        store_of = self.host.runtime.store if self.host.runtime is not None else (lambda kind: None)
        result = await apply_redo(undo, session, point, store_of)
        if result.conflict_diff:
            self.host.show_diff("Your changes since the undo (not overwritten)", result.conflict_diff, subject="undo-conflict")
            self.host.reveal_diff()
        await self.host.add_notice(result.message, "info" if result.ok else "error")
        if result.ok:
            self.redo_point = None
            await self._after_change(f"The user redid {what}: the changes you made in it are back in the project.")

    async def _confirm_undo(self, turns: list[TurnRecord]) -> bool:
        """Say what undoing `turns` does (the files back, each authored tool pruned or reverted) and ask."""
        edited = True
        if len(turns) == 1:
            what = f"turn {turns[0].turn} ({turns[0].prompt[:60]!r})"
            edited = await self.show_turn_edits(when="question", turn=turns[0].turn)
        else:
            what = f"turns {turns[0].turn} to {turns[-1].turn} ({len(turns)} turns)"
        parts = self._undo_parts()
        authored = (await asyncio.to_thread(parts[0].authored_preview, parts[1], turns)  # as the undo will decide
                    if parts is not None else [])
        files = ("The project files it changed are put back as they were before it (the diff pane shows a single turn's "
                 "edits)." if edited else "It changed no project files.")
        lines = [f"Undo {escape(what)}?", files]
        if authored:
            lines.append("Tools and recipes: " + escape(", ".join(authored)) + ".")
        ignored = sorted({record.path for turn in turns for record in turn.ignored})
        if ignored:
            from tui_agent.core.sandbox import is_startup_file  # here: the first paint loads no sandbox

            startup = [path for path in ignored if is_startup_file(PurePosixPath(path).name)]
            lines.append(f"Files git ignores that its runs changed: {len(ignored)}, put back where their content was kept, "
                         "the others listed as not undone" + (f" (Python start-up files: {escape(', '.join(startup))})"
                                                             if startup else "") + ".")
        lines.append("Your own later edits are never overwritten.")
        answer = await self.host.ask(ConfirmScreen("\n".join(lines), yes="Undo", no="Keep"))
        return bool(answer)

    async def _show_undo(self, result: UndoResult) -> None:
        if result.conflict_diff:
            self.host.show_diff("Your changes since that turn (not overwritten)", result.conflict_diff, subject="undo-conflict")
            self.host.reveal_diff()
        await self.host.add_notice(result.message, "info" if result.ok else ("error" if result.conflict_diff else "warning"))
        if result.ok:
            await self._after_change(result.note_for_model)

    async def _after_change(self, note_for_model: str) -> None:
        """After an undo or a redo: the turns' marks, the model told, the catalog and the branch refreshed."""
        parts = self._undo_parts()
        recorded = parts[0].turns(parts[1]) if parts is not None else []
        self.turns.view().mark_undone([(turn.prompt, turn.undone) for turn in recorded])
        if self.host.runtime is not None and (agent := agent_of(self.host.runtime)) is not None:
            agent.add_note(note_for_model)
        self.host.schedule_catalog_refresh()
        self.host.refresh_branch()

    async def diff(self, args: str) -> None:
        """The last turn's changes to project files (or turn N's): every tool's, shell commands' included."""
        number = args.strip()
        if number and not number.isdigit():
            await self.host.add_notice("Usage: /diff [TURN NUMBER]", "warning")
            return
        if await self.show_turn_edits(turn=int(number) if number else None):
            self.host.reveal_diff()

    async def show_turn_edits(self, *, when: TurnEditsAsked = "asked", turn: int | None = None) -> bool:
        """Put a turn's edits to project files in the diff pane; False when there are none. Asked for (/diff), no edits
        are said too; at a turn's end (`turn_end`) edits are announced in the conversation; under a question that
        names the turn itself (`question`), nothing is said."""
        parts = self._undo_parts()
        if parts is None:
            if when == "asked":
                await self.host.add_notice(NO_GIT, "warning")
            return False
        undo, session = parts
        try:
            diff = await undo.turn_diff(session, turn)
        except PROJECT_FAILURES as exc:  # a git failure: say so, the conversation goes on
            self.host.notify(f"could not compute the turn's edits: {exc}", severity="error")
            return False
        if not diff:
            if when == "asked":
                self.host.notify("No edits to project files in that turn." if diff is not None else "No turn yet in this session.")
            return False
        if turn is None:  # the latest turn: named, so the title still says which once later turns changed nothing
            recorded = undo.turns(session)
            turn = recorded[-1].turn if recorded else None
        self.host.show_diff(f"Turn {turn}'s edits to project files" if turn is not None else "The last turn's edits to "
                            "project files", diff, subject="turn")
        if when == "turn_end":
            files = sum(1 for line in diff.splitlines() if line.startswith("diff --git"))
            await self.host.add_notice(f"The agent changed {files} project file(s) in this turn: see the diff pane (/diff, /undo).")
        return True

    async def permissions(self, args: str) -> None:
        """List the allow rules; `/permissions remove [RULE]` removes one after naming it and asking."""
        if self.host.runtime is None:
            await self.host.add_notice("Still opening the project…", "warning")
            return
        permissions = self.host.runtime.core.permissions
        verb, _, rest = args.strip().partition(" ")
        if verb == "remove":
            await self._remove_rule(permissions, rest.strip())
            return
        rules = permissions.rules()
        lines = [f"Permission mode: {permissions.mode} (shift+tab cycles it). Allow rules (no approval asked for what they cover):"]
        lines += [f"  {rule:<40} {source}" for rule, source in rules] or ["  (none: answer 'always allow' in an approval to add one)"]
        if rules:
            lines.append("To remove one: /permissions remove (pick it) or /permissions remove RULE; you are asked first.")
        await self.host.add_notice("\n".join(lines))

    async def _remove_rule(self, permissions: Permissions, rule: str) -> None:
        """Remove `rule` (picked from a list when empty) once the person confirmed, naming it and where it is kept."""
        sources = dict(permissions.rules())
        if not rule:
            choices = [Choice(text, f"{text}  ({source})") for text, source in sources.items()]
            picked = await self.host.ask(ChoiceScreen("Which allow rule to remove? (esc: none)", choices, empty="no allow rules"))
            if not picked:
                return
            rule = picked
        source = sources.get(rule)
        if source is None:
            await self.host.add_notice(f"/permissions: no allow rule {rule!r}; /permissions lists them", "error")
            return
        kept_in = {"project": ".agent/config.toml (shared: committed with the project)",
                   "local": "your own .agent/config.local.toml"}
        where = f"it is deleted from {kept_in[source]}" if source in kept_in else f"it came from the {source}"
        question = f"Remove the allow rule [b]{escape(rule)}[/b]?\n{escape(where.capitalize())}; what it covers asks for approval again."
        if not await self.host.ask(ConfirmScreen(question, yes="Remove", no="Keep")):
            await self.host.add_notice(f"Allow rule {rule} kept.")
            return
        try:
            message = permissions.remove_rule(rule)
        except (ValueError, OSError) as exc:
            await self.host.add_notice(f"/permissions: {exc}", "error")
            return
        await self.host.add_notice(f"Allow rule {message}.")
