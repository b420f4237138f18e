"""The agent turn as the app runs it: a cancellable worker turning core events into conversation widgets."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import TYPE_CHECKING

from textual import work

from tui_agent.core.events import (
    BranchChanged,
    CatalogChanged,
    Event,
    FilesChanged,
    ToolAuthored,
    TurnFailed,
    Usage,
    UsageChanged,
)
from tui_agent.ui.completion import attach_mentions, attachment_note
from tui_agent.ui.heap import freeze_long_lived
from tui_agent.ui.prompt_queue import PromptQueue
from tui_agent.ui.screens.approval import ApprovalScreen
from tui_agent.ui.transcript import transcript_of
from tui_agent.ui.widgets.messages import Entry
from tui_agent.ui.widgets.queued_prompts import QueuedPrompts
from tui_agent.ui.widgets.conversation import Conversation
from tui_agent.ui.widgets.header import StatusHeader

if TYPE_CHECKING:
    from tui_agent.core.agent.loop import Agent
    from tui_agent.core.agent.permissions import ApprovalAnswer, ApprovalRequest
    from tui_agent.ui.app import TuiAgentApp

AGENT_GROUP = "agent"
PROMPT_BACK = "The prompt is back in the input box: edit it or press enter to resend."


class TurnMixin:
    """Starts turns, renders their events, answers approvals with a modal, cancels on Escape."""

    def init_turn_state(self: "TuiAgentApp") -> None:
        self.turn_running = False
        self.prompt_queue = PromptQueue()
        self.turn_prompt = ""  # what the person sent for the running turn: back into the box if it fails

    async def submit_prompt(self: "TuiAgentApp", text: str) -> None:
        """A recipe hands the agent a prompt: run it now, or after the running turn."""
        if self.turn_running:
            self.prompt_queue.push(text, "recipe")
            self.notify("A recipe queued a prompt for after this turn.")
        else:
            self.start_turn(text, source="recipe")

    def send_queued_prompt(self: "TuiAgentApp") -> None:
        """Start the oldest queued prompt when the agent is free (called when the runtime is ready and after a turn)."""
        if self.turn_running or self.runtime is None or self.runtime.agent is None:
            return
        item = self.prompt_queue.pop()
        if item is not None and item.source == "command":
            self.run_worker(self.run_queued_command(item.text), group="input")
        elif item is not None:
            self.start_turn(item.text, source=item.source)

    async def run_queued_command(self: "TuiAgentApp", text: str) -> None:
        """A slash command typed during a turn (/clear, /resume, /undo, /rewind) runs after it; then the queue moves on."""
        await self.slash_commands.handle_input(text)
        self.send_queued_prompt()

    async def show_session(self: "TuiAgentApp", path: Path, session_id: str) -> None:
        """Show a session from its file: its events folded as a live turn folds them (only the newest entries get widgets)."""
        from tui_agent.core.agent.sessions import read_events

        decoded = await asyncio.to_thread(read_events, path)
        transcript = await asyncio.to_thread(transcript_of, decoded.events)  # thousands of events: off the event loop
        from tui_agent.ui.app import warm_up_rendering  # (app.py imports this module)

        await asyncio.to_thread(warm_up_rendering)  # Markdown and pygments load off the event loop, not on the first message
        freeze_long_lived()  # the session's entries: before its first widgets are laid out, a frame at a time
        await self.conversation.load_transcript(transcript)
        if decoded.problems:
            await self.conversation.add(Entry("notice", level="warning", text=(
                f"{len(decoded.problems)} event record(s) in {path.name} could not be read and are not shown "
                f"(first: {decoded.problems[0]}).")))
        await self.conversation.add(Entry("notice", text=f"Resumed session {session_id}."))
        freeze_long_lived()

    def start_turn(self: "TuiAgentApp", prompt: str, source: str = "person") -> bool:
        """Run `prompt` as an agent turn; False (with a notice) when no agent or a turn is already running.

        While the project is still opening the prompt is queued, and sent as soon as the model client is ready.
        """
        if self.runtime is None and not self.ready.is_set():
            self.prompt_queue.push(prompt, source)
            self.run_worker(self.add_notice(f"Queued until the project is open: {prompt[:80]}", "info"))
            return False
        agent = self.runtime.agent if self.runtime is not None else None
        if agent is None:
            self.run_worker(self.add_notice(self.no_model_message(), "warning"))
            return False
        if self.turn_running:
            self.prompt_queue.push(prompt, source)  # shown above the prompt box; sent when this turn ends
            return False
        self.turn_prompt = prompt if source == "person" else ""
        self.turn_running = True
        self.header.busy = True
        self.refresh_bindings()
        self.run_turn(agent, prompt)
        return True

    @work(exclusive=True, group=AGENT_GROUP)
    async def run_turn(self: "TuiAgentApp", agent: Agent, prompt: str) -> None:
        conversation = self.conversation
        await conversation.echo_prompt(prompt)
        if self.turn_prompt:  # the person's own prompt: the files it @mentions go along
            prompt = await self.with_attachments(prompt)
        stream = agent.run_turn(prompt)
        try:
            async for event in stream:
                if not isinstance(event, (ToolAuthored, CatalogChanged)):  # those reach the app through the change feed
                    await self.handle_event(event)
        except asyncio.CancelledError:
            await self.mark_turn_cancelled(conversation)
            raise
        except Exception as exc:  # the agent should yield TurnFailed; this catches what escaped it
            await conversation.add(Entry("notice", text=f"turn failed: {type(exc).__name__}: {exc}", level="error"))
        finally:
            try:
                await asyncio.shield(stream.aclose())
            except (Exception, asyncio.CancelledError):
                pass
            await conversation.finish_stream()
        try:
            if self.is_running:
                self.catalog_sync.refresh_branch()
                self.schedule_catalog_refresh()
                # still inside the turn: a /undo typed now waits for this diff instead of having its own replaced by it
                await self.undo_commands.show_turn_edits(announce=True)
        finally:
            self.end_turn()
        if self.is_running:
            self.call_later(self.send_queued_prompt)

    async def mark_turn_cancelled(self: "TuiAgentApp", conversation: Conversation) -> None:
        """Esc: calls still running show as cancelled, the turn ends, and a prompt queued during it goes next."""
        await conversation.finish_stream()
        now = time.monotonic()
        for entry in conversation.tool_entries():
            if entry.result is None:
                entry.result, entry.is_error, entry.cancelled = "cancelled (esc): the call was stopped", True, True
                entry.duration_ms = (now - entry.started) * 1000
                conversation.refresh_tool(entry.call_id)
        await conversation.add(Entry("notice", text="Turn cancelled.", level="warning"))
        self.end_turn()
        self.call_later(self.send_queued_prompt)

    def end_turn(self: "TuiAgentApp") -> None:
        """The turn is over: the header stops showing busy and the footer's keys follow."""
        self.turn_running = False
        if self.is_running and self.screen_stack:  # not while the app shuts down (its widgets may be gone)
            for header in self.screen_stack[0].query(StatusHeader):  # the main screen's, under any open modal
                header.busy = False
            self.refresh_bindings()

    async def handle_event(self: "TuiAgentApp", event: Event) -> None:
        """One core event into pixels: the conversation folds it into entries; here only its other effects."""
        await self.conversation.show_event(event)
        if isinstance(event, ToolAuthored):
            verb = "created" if event.created else "updated"
            self.notify(f"{event.kind} {event.name} {verb}" + (f" · {event.commit[:7]}" if event.commit else " · not committed"))
            self.schedule_catalog_refresh(select=event.name)
        elif isinstance(event, (CatalogChanged, FilesChanged, UsageChanged)):
            self.schedule_catalog_refresh()
        elif isinstance(event, BranchChanged):
            self.header.branch = event.branch or "no git"
        elif isinstance(event, Usage):
            header = self.header
            # tokens in: uncached, cache writes and cache reads alike (the cost prices each at its rate)
            header.input_tokens = event.session_input_tokens + event.session_cache_read_tokens + event.session_cache_write_tokens
            header.output_tokens = event.session_output_tokens or header.output_tokens + event.output_tokens
            header.cost_usd = event.session_cost_usd
        elif isinstance(event, TurnFailed):
            failed = event.prompt or self.turn_prompt
            if failed:
                self.return_to_prompt_box(failed)
                await self.conversation.add(Entry("notice", text=PROMPT_BACK, level="info"))

    async def with_attachments(self: "TuiAgentApp", prompt: str) -> str:
        """`prompt` with the text of each `@path` it mentions appended; says what was attached and what was not."""
        sent, attached, problems = await asyncio.to_thread(attach_mentions, prompt, self.project_root)
        if attached:
            await self.conversation.add(Entry("notice", text=attachment_note(attached)))
        for problem in problems:
            await self.conversation.add(Entry("notice", text=problem, level="warning"))
        return sent

    def return_to_prompt_box(self: "TuiAgentApp", text: str) -> None:
        """Put `text` back in the prompt box, ahead of whatever draft is there (nothing typed is lost)."""
        draft = self.prompt_area.text
        self.prompt_area.load_text(text + (f"\n\n{draft}" if draft.strip() else ""))
        self.prompt_area.move_cursor(self.prompt_area.document.end)

    def on_queued_prompts_edit_requested(self: "TuiAgentApp", message: QueuedPrompts.EditRequested) -> None:
        self.return_to_prompt_box(message.text)
        self.screen.set_focus(self.prompt_area)

    def action_cancel_turn(self: "TuiAgentApp") -> None:
        """Escape: stop the running turn (the HTTP stream and any sandboxed run go with its task)."""
        if not self.turn_running:
            return
        self.workers.cancel_group(self, AGENT_GROUP)
        sandbox = self.runtime.sandbox if self.runtime is not None else None
        if sandbox is not None:
            self.run_worker(sandbox.cancel_running(), group="cancel")

    async def approve(self: "TuiAgentApp", request: ApprovalRequest) -> bool | ApprovalAnswer:
        """The approval callback given to the runtime: a modal showing the exact command or diff."""
        if self.options.approve_all:
            return True
        screen = ApprovalScreen(kind=str(request.kind), tool=str(request.tool), summary=str(request.summary), detail=str(request.detail),
                                subject=request.subject, protected=request.protected)
        answer = await self.ask(screen)
        return answer if answer is not None else False
