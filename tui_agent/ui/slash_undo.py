"""`/undo`, `/rewind`, `/diff` and `/permissions`: the agent's turns taken back, shown, and the allow rules in force."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tui_agent.ui.screens.pickers import Choice, ChoiceScreen

if TYPE_CHECKING:
    from tui_agent.ui.app import TuiAgentApp

NO_GIT = "Undo needs a git repository: turns are checkpointed in git's object store (the user's index and branches are never touched)."


class UndoCommandsMixin:
    """Slash commands over the core's UndoService (runtime.undo) and Permissions (runtime.permissions)."""

    def _undo_service(self: "TuiAgentApp") -> Any:
        return getattr(self.runtime, "undo", None)

    async def _undo_ready(self: "TuiAgentApp", command: str) -> bool:
        if self.turn_running:  # typed during a turn, it undoes that turn once it is over (esc cancels the turn sooner)
            self.prompt_queue.push(command.strip(), "command")
            return False
        if self._undo_service() is None or getattr(self.runtime, "session", None) is None:
            await self.add_notice(NO_GIT, "warning")
            return False
        return True

    async def slash_undo(self: "TuiAgentApp", args: str) -> None:
        """Undo the last turn: its file changes (any tool, shell included) and what it authored in the catalog."""
        if await self._undo_ready(f"/undo {args}"):
            await self._show_undo(await self._undo_service().undo_last(self.runtime.session))

    async def slash_rewind(self: "TuiAgentApp", args: str) -> None:
        """Undo an earlier turn and every turn after it: `/rewind N`, or pick the turn from a list."""
        if not await self._undo_ready(f"/rewind {args}"):
            return
        undo = self._undo_service()
        turns = [turn for turn in undo.turns(self.runtime.session) if not turn.undone]
        number = args.strip()
        if not number:
            choices = [Choice(str(turn.turn), f"turn {turn.turn:>3}  {turn.prompt[:70] or '(no prompt)'}") for turn in reversed(turns)]
            number = await self.ask(ChoiceScreen("Rewind: undo this turn and every later one", choices,
                                                 empty="no turn to rewind in this session")) or ""
            if not number:
                return
        if not number.isdigit():
            await self.add_notice("Usage: /rewind [TURN NUMBER]", "warning")
            return
        await self._show_undo(await undo.rewind(self.runtime.session, int(number)))

    async def _show_undo(self: "TuiAgentApp", result: Any) -> None:
        if result.conflict_diff:
            self.diff_pane.show("Your changes since that turn (not overwritten)", result.conflict_diff, subject="undo-conflict")
            self.reveal_diff()
        await self.add_notice(result.message, "info" if result.ok else ("error" if result.conflict_diff else "warning"))
        if result.ok:
            agent = getattr(self.runtime, "agent", None)
            if agent is not None:
                agent.add_note(result.note_for_model)
            self.schedule_catalog_refresh()
            self.refresh_branch()

    async def slash_diff(self: "TuiAgentApp", args: str) -> None:
        """The last turn's changes to project files (or turn N's): every tool's, shell commands' included."""
        number = args.strip()
        if number and not number.isdigit():
            await self.add_notice("Usage: /diff [TURN NUMBER]", "warning")
            return
        if await self.show_turn_edits(turn=int(number) if number else None):
            self.reveal_diff()

    async def show_turn_edits(self: "TuiAgentApp", *, announce: bool = False, turn: int | None = None) -> bool:
        """Put a turn's edits to project files in the diff pane; False when there are none."""
        undo, session = self._undo_service(), getattr(self.runtime, "session", None)
        if undo is None or session is None:
            if not announce:
                await self.add_notice(NO_GIT, "warning")
            return False
        try:
            diff = await undo.turn_diff(session, turn)
        except Exception as exc:  # a git failure: say so, the conversation goes on
            self.notify(f"could not compute the turn's edits: {exc}", severity="error")
            return False
        if not diff:
            if not announce:
                self.notify("No edits to project files in that turn." if diff is not None else "No turn yet in this session.")
            return False
        self.diff_pane.show("This turn's edits to project files" if turn is None else f"Turn {turn}'s edits", diff, subject="turn")
        if announce:
            files = sum(1 for line in diff.splitlines() if line.startswith("diff --git"))
            await self.add_notice(f"The agent changed {files} project file(s) in this turn: see the diff pane (/diff, /undo).")
        return True

    async def slash_permissions(self: "TuiAgentApp", args: str) -> None:
        """List the allow rules; `/permissions remove RULE`, or pick one to remove."""
        permissions = getattr(self.runtime, "permissions", None)
        if permissions is None:
            await self.add_notice("Still opening the project…", "warning")
            return
        verb, _, rest = args.strip().partition(" ")
        if verb == "remove" and rest.strip():
            await self._remove_rule(rest.strip())
            return
        rules = permissions.rules()
        lines = [f"Permission mode: {permissions.mode}. Allow rules (no approval asked for what they cover):"]
        lines += [f"  {rule:<40} {source}" for rule, source in rules] or ["  (none: answer 'always allow' in an approval to add one)"]
        await self.add_notice("\n".join(lines))
        if rules:
            choices = [Choice(rule, f"remove {rule}  ({source})") for rule, source in rules]
            chosen = await self.ask(ChoiceScreen("Remove an allow rule (esc keeps them all)", choices))
            if chosen:
                await self._remove_rule(chosen)

    async def _remove_rule(self: "TuiAgentApp", rule: str) -> None:
        try:
            message = self.runtime.permissions.remove_rule(rule)
        except (ValueError, OSError) as exc:
            await self.add_notice(f"/permissions: {exc}", "error")
            return
        await self.add_notice(f"Allow rule {message}.")
