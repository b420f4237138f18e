"""The agent turn as the app runs it: a cancellable worker turning core events into conversation widgets."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from textual.css.query import NoMatches
from textual.message import Message

from tui_agent.core.events import (
    BranchChanged,
    CatalogChanged,
    Event,
    FilesChanged,
    PermissionModeChanged,
    ToolAuthored,
    TurnCancelled,
    TurnFailed,
    Usage,
    UsageChanged,
)
from tui_agent.ui.completion import attach_mentions, attachment_note
from tui_agent.ui.context_usage import context_percent_of, session_totals, usage_figures
from tui_agent.ui.event_messages import EventPoster
from tui_agent.ui.heap import freeze_long_lived
from tui_agent.ui.prompt_queue import PromptQueue
from tui_agent.ui.transcript import transcript_of
from tui_agent.ui.widgets.messages import Entry
from tui_agent.core.runtime_state import agent_of, catalog_of, sandbox_of
from tui_agent.ui.turn_alert import alert_if_long

if TYPE_CHECKING:
    from tui_agent.core.agent.loop import Agent
    from tui_agent.core.agent.permissions import ApprovalAnswer, ApprovalRequest
    from textual.worker import Worker

    from tui_agent.ui.host import ConversationView, PromptBox, UIHost

ResultType = TypeVar("ResultType")
AGENT_GROUP = "agent"
PROMPT_BACK = "The prompt is back in the input box: edit it or press enter to resend."
QUEUE_WAITS = " The prompts queued after it wait, and follow it once it is sent."
NOT_SENT = "Not sent: no model is configured (how to set one up is above; /help repeats it). The prompt is back in the input box."


def recorded_turns(path: Path) -> list[tuple[str, bool]]:
    """Each recorded turn of a session file, oldest first: its prompt, and whether /undo or /rewind took it back."""
    from tui_agent.core.undo.journal import load_turns

    return [(turn.prompt, turn.undone) for turn in load_turns(path)]


class TurnRunner:
    """Starts turns, posts their events to the conversation, answers approvals with a modal, cancels on Escape (the
    app holds one)."""

    def __init__(self, host: UIHost, *, view: Callable[[], ConversationView], prompt_box: Callable[[], PromptBox]) -> None:
        self.host = host
        self.view = view
        """The conversation the turns render into (its job; a `!command` run and /undo's marks use it too)."""
        self.prompt_box = prompt_box
        """The prompt box, where a prompt that was not sent goes back."""
        self.events = EventPoster(self._post)
        """Core events go to the conversation as ShowEvent messages (a turn's awaited one at a time)."""
        self.run_input: Callable[[str], Awaitable[None]] | None = None
        """Runs a slash or `!` command typed during a turn, once it is over (the slash commands' handle_input)."""
        self.after_turn: Callable[[], Awaitable[object]] | None = None
        """Shows what the turn changed in the project's files (the undo commands' turn diff), still inside the turn."""
        self.running = False
        self._worker: Worker[None] | None = None
        self.queue = PromptQueue()  # shown above the prompt box; each item is sent when the turn before it ends
        self.prompt = ""  # what the person sent for the running turn: back into the box if it fails
        self.queue_held = False
        """A failed prompt is back in the box: the prompts queued after it wait until the next prompt is sent."""

    def _post(self, message: Message) -> bool:
        """Post to the conversation; False once it is gone (the app is closing, and a listener on another thread
        delivered one more event: nothing would show it)."""
        try:
            conversation = self.view()
        except NoMatches:
            return False
        return conversation.post_message(message)

    def connect(self, *, run_input: Callable[[str], Awaitable[None]], after_turn: Callable[[], Awaitable[object]]) -> None:
        """The controllers built after this one (they queue into it): the slash commands and the turn's diff."""
        self.run_input, self.after_turn = run_input, after_turn

    async def submit_prompt(self, text: str) -> None:
        """A recipe hands the agent a prompt: run it now, or after the running turn."""
        if self.running:
            self.queue.push(text, "recipe")
            self.host.notify("A recipe queued a prompt for after this turn.")
        else:
            self.start(text, source="recipe")

    def send_queued(self) -> None:
        """Start the oldest queued prompt when the agent is free (called when the runtime is ready and after a turn);
        not while a failed prompt waits in the box to be sent again (it was typed first)."""
        if self.running or agent_of(self.host.state) is None or self.queue_held:
            return
        item = self.queue.pop()
        if item is not None and item.source == "command":
            self.host.run_worker(self._run_queued_command(item.text), group="input")
        elif item is not None:
            self.start(item.text, source=item.source)

    async def _run_queued_command(self, text: str) -> None:
        """A slash or `!` command typed during a turn (/clear, /resume, /undo, /rewind, !ls) runs after it; then the queue
        moves on."""
        if self.run_input is not None:
            await self.run_input(text)
        self.send_queued()

    async def hand_back_queued(self) -> None:
        """No agent to send them to: prompts typed while the project opened go back into the prompt box."""
        waiting = [item.text for item in self.queue.clear()]
        if not waiting:
            return
        prompt_box = self.prompt_box()
        draft = prompt_box.text
        prompt_box.text = "\n\n".join([*waiting, *([draft] if draft.strip() else [])])
        await self.host.add_notice("The prompt typed while the project opened was not sent (no agent): it is back in the prompt box.", "warning")

    async def show_session(self, path: Path, session_id: str) -> Usage | None:
        """Show a session from its file: its events folded as a live turn folds them (only the newest entries get widgets);
        its last recorded Usage, from which the header's context figure is taken again."""
        from tui_agent.core.agent.sessions import read_events

        conversation = self.view()
        decoded = await asyncio.to_thread(read_events, path)
        freeze_long_lived()  # the decoded events: each full collection while folding them would walk them all
        transcript = await asyncio.to_thread(transcript_of, decoded.events)  # thousands of events: off the event loop
        transcript.mark_undone(await asyncio.to_thread(recorded_turns, path))
        from tui_agent.ui.warm_up import warm_up_rendering

        await asyncio.to_thread(warm_up_rendering)  # Markdown and pygments load off the event loop, not on the first message
        freeze_long_lived()  # the session's entries: before its first widgets are laid out, a frame at a time
        await conversation.load_transcript(transcript)
        if decoded.problems:
            await conversation.add(Entry("notice", level="warning", text=(
                f"{len(decoded.problems)} event record(s) in {path.name} could not be read and are not shown "
                f"(first: {decoded.problems[0]}).")))
        await conversation.add(Entry("notice", text=f"Resumed session {session_id}."))
        freeze_long_lived()
        return next((event for event in reversed(decoded.events) if isinstance(event, Usage)), None)

    def start(self, prompt: str, source: str = "person") -> bool:
        """Run `prompt` as an agent turn; False (with a notice) when no agent or a turn is already running.

        While the project is still opening the prompt is queued, and sent as soon as the model client is ready.
        """
        app = self.host
        if app.opening:
            self.queue.push(prompt, source)
            app.run_worker(app.add_notice(f"Queued until the project is open: {prompt[:80]}", "info"))
            return False
        agent = agent_of(app.state)
        if agent is None:
            if source == "person":
                self.return_to_prompt_box(prompt)
            app.run_worker(app.add_notice(NOT_SENT, "warning"))
            return False
        if self.running:
            self.queue.push(prompt, source)
            return False
        self.prompt = prompt if source == "person" else ""
        self.queue_held = False
        self.running = True
        app.busy = True  # (the footer's keys follow)
        self._worker = app.run_worker(self._run(agent, prompt), group=AGENT_GROUP, exclusive=True)
        return True

    async def _run(self, agent: Agent, prompt: str) -> None:
        """The turn's worker: its events into the conversation until it ends, fails or is cancelled."""
        app, conversation = self.host, self.view()
        started = time.monotonic()
        await conversation.echo_prompt(prompt)
        if self.prompt:  # the person's own prompt: the files it @mentions go along
            prompt = await self._with_attachments(prompt)
        stream = agent.run_turn(prompt)
        cancelled = False
        try:
            async for event in stream:
                if not isinstance(event, (ToolAuthored, CatalogChanged)):  # those reach the app through the change feed
                    await self.handle_event(event)
        except asyncio.CancelledError:
            cancelled = True
            raise
        except Exception as exc:  # the agent should yield TurnFailed; this catches what escaped it
            await conversation.add(Entry("notice", text=f"turn failed: {type(exc).__name__}: {exc}", level="error"))
        finally:
            try:
                await asyncio.shield(stream.aclose())
            except (Exception, asyncio.CancelledError):  # edge: the turn already ended (or failed, said above)
                pass
            await self.events.settle()  # an event posted before the cancel is shown before the stream is closed
            await conversation.finish_stream()
            if cancelled:  # only once the turn's stream is closed: the next turn must not overlap its clean-up
                await self._mark_cancelled(conversation)
        try:
            if app.is_running:
                app.refresh_branch()
                app.schedule_catalog_refresh()
                # still inside the turn: a /undo typed now waits for this diff instead of having its own replaced by it
                if self.after_turn is not None:
                    await self.after_turn()
        finally:
            self.end()
        if app.is_running:
            runtime = app.runtime
            threshold = runtime.core.settings.ui_notify_after_s if runtime is not None else notify_after_default()
            alert_if_long(app, time.monotonic() - started, threshold, "the turn is over")
            app.call_later(self.send_queued)

    async def _mark_cancelled(self, conversation: ConversationView) -> None:
        """Esc: calls still running show as cancelled, the turn ends, and a prompt queued during it goes next."""
        await conversation.finish_stream()
        now = time.monotonic()
        for entry in conversation.tool_entries():
            if entry.result is None:  # the fold marks it stopped, as /resume will; only the live view knows for how long
                entry.duration_ms = (now - entry.started) * 1000
        await self.events.show(TurnCancelled())
        self.end()
        self.host.call_later(self.send_queued)

    def end(self) -> None:
        """The turn is over: the header stops showing busy and the footer's keys follow."""
        self.running = False
        self.host.busy = False

    async def handle_event(self, event: Event) -> None:
        """One event of the turn: posted to the conversation and shown before the next one is; then its other effects."""
        await self.events.show(event)
        self.follow_up(event)
        if isinstance(event, TurnFailed):
            failed = event.prompt or self.prompt
            if failed:
                self.return_to_prompt_box(failed)
                self.queue_held = bool(len(self.queue))  # it goes first: the queue waits for it to be sent again
                await self.view().add(Entry("notice", text=PROMPT_BACK + (QUEUE_WAITS if self.queue_held else ""),
                                            level="info"))

    def show_feed_event(self, event: Event) -> None:
        """An event from the change feed or a recipe: posted to the conversation behind what is there; its effects now."""
        self.events.show_later(event)
        self.follow_up(event)

    def follow_up(self, event: Event) -> None:
        """An event's effects outside the conversation: the catalog, the header's branch and usage, a toast."""
        app = self.host
        if isinstance(event, ToolAuthored):
            verb = "created" if event.created else "updated"
            catalog = catalog_of(app.state) if not event.commit else None
            why = catalog.commit_blocker() if catalog is not None else None  # e.g. a detached HEAD: said, not hidden
            app.notify(f"{event.kind} {event.name} {verb}" + (f" · {event.commit[:7]}" if event.commit else
                                                              " · not committed" + (f": {why}" if why else "")))
            app.schedule_catalog_refresh(select=event.name)
        elif isinstance(event, (CatalogChanged, FilesChanged, UsageChanged)):
            app.schedule_catalog_refresh()
        elif isinstance(event, BranchChanged):
            app.branch = event.branch or "no git"
        elif isinstance(event, PermissionModeChanged):  # an approved plan left plan mode: the header follows
            app.permission_mode = event.mode
        elif isinstance(event, Usage):
            agent = agent_of(app.state)
            context = context_percent_of(event, agent.context_limit_tokens) if agent is not None else app.usage.context_percent
            app.usage = usage_figures(session_totals(event), context)

    async def _with_attachments(self, prompt: str) -> str:
        """`prompt` with the text of each `@path` it mentions appended; says what was attached and what was not."""
        conversation = self.view()
        sent, attached, problems = await asyncio.to_thread(attach_mentions, prompt, self.host.project_root)
        if attached:
            await conversation.add(Entry("notice", text=attachment_note(attached)))
        for problem in problems:
            await conversation.add(Entry("notice", text=problem, level="warning"))
        return sent

    def return_to_prompt_box(self, text: str) -> None:
        """Put `text` back in the prompt box, ahead of whatever draft is there (nothing typed is lost)."""
        prompt_box = self.prompt_box()
        draft = prompt_box.text
        prompt_box.set_text(text + (f"\n\n{draft}" if draft.strip() else ""))

    async def run_stoppable(self, work: Coroutine[Any, Any, ResultType]) -> ResultType:
        """Run work other than a turn (/compact, a `!command`, a tool run from the catalog) in the turn's place and wait
        for it: the header shows busy, prompts typed meanwhile queue, Esc stops it (raising WorkerCancelled here); its
        own failure is raised as is. During a turn it runs alongside it (Esc stops both)."""
        from textual.worker import WorkerFailed

        if self.running:
            return await work
        self.running = True
        self.host.busy = True
        worker = self.host.run_worker(work, group=AGENT_GROUP, exclusive=True, exit_on_error=False)
        self._worker = worker  # type: ignore[assignment]  # (only cancelled, never awaited, through this reference)
        try:
            return await worker.wait()
        except WorkerFailed as failed:
            raise failed.error from None
        finally:
            self.end()
            self.host.call_later(self.send_queued)

    def cancel(self) -> None:
        """Escape: stop the running turn (the HTTP stream and any sandboxed run go with its task)."""
        if not self.running:
            return
        app = self.host
        if self._worker is not None:
            self._worker.cancel()
        sandbox = sandbox_of(app.state)
        if sandbox is not None:
            app.run_worker(sandbox.cancel_running(), group="cancel")

    async def approve(self, request: ApprovalRequest) -> bool | ApprovalAnswer:
        """The approval callback given to the runtime: a modal showing the exact command or diff."""
        if self.host.options.approve_all:
            return True
        from tui_agent.ui.screens.approval import ApprovalScreen  # (and the permission rules): loaded with the first approval

        screen = ApprovalScreen(kind=str(request.kind), tool=str(request.tool), summary=str(request.summary), detail=str(request.detail),
                                subject=request.subject, protected=request.protected, notes=request.notes)
        waiting = next((entry for entry in reversed(self.view().tool_entries()) if entry.result is None), None)
        self._mark_awaiting(waiting, True)
        try:
            answer = await self.host.ask(screen)
        finally:
            self._mark_awaiting(waiting, False)
        return answer if answer is not None else False

    def _mark_awaiting(self, entry: Entry | None, awaiting: bool) -> None:
        """The call asking shows "waiting for your approval"; once answered, its timer starts from the answer."""
        if entry is None:
            return
        entry.awaiting_approval = awaiting
        entry.started = time.monotonic()
        self.view().refresh_tool(entry.call_id)


def notify_after_default() -> int:
    """`ui.notify_after_s` before a runtime (and its settings) exists; the settings model loads after the first frame."""
    from tui_agent.core.settings import Settings

    return Settings().ui_notify_after_s
