"""The one fold of core events into conversation entries, for a live turn and for a resumed session (/resume, paging) alike."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from tui_agent.core.events import (
    ApprovalDenied,
    Event,
    Notice,
    PermissionModeChanged,
    PlanUpdated,
    TextDelta,
    ThinkingDelta,
    ToolAuthored,
    ToolCallFinished,
    ToolCallStarted,
    ToolOutputDelta,
    TurnCancelled,
    TurnFailed,
    TurnFinished,
    TurnStarted,
)
from tui_agent.core.agent.plan_tools import checklist
from tui_agent.ui.completion import attachment_note, split_attachments
from tui_agent.ui.live_output import live_tail
from tui_agent.ui.widgets.messages import Entry

TRUNCATION_MARK = "\n… (truncated for the model)"
SEGMENT_CHARS = 1500
"""A long reply continues in a new entry at a paragraph break once the current one holds this much text (the live
Markdown widget then re-parses a bounded document per chunk, and a resumed session pages in bounded pieces)."""

AUTHORING_TOOLS = ("create_tool", "create_recipe")
CANCELLED_CALL = "cancelled: the turn was stopped before this call finished"
INTERRUPTED_CALL = "interrupted: the session ended before this call returned a result"


def paragraph_break(text: str, chunk: str) -> int | None:
    """Where in `chunk` a paragraph ends outside a code fence (the index after the blank line), if anywhere."""
    joined = text + chunk
    position = joined.rfind("\n\n", max(0, len(text) - 1))
    if position < 0 or joined[:position].count("```") % 2 == 1:
        return None
    return position + 2 - len(text)


RETRY = re.compile(r"^(?P<failure>.*) — retrying \((?P<attempt>\d+)/(?P<of>\d+)\) in [\d.]+s$", re.DOTALL)
"""The model client's notice before each retry (core/agent/model.py): one entry per failure, its count updated."""
NOT_KEPT = re.compile(r" \(the prompt was not kept[^)]*\)$")
"""The core's words for a front end with no input box (headless); the TUI puts the prompt back in its box instead."""


def failure_text(event: TurnFailed, retries: str = "") -> str:
    """'turn failed (connection): cannot reach … server.' (`retries`: ' after 2 retries', when the notice it replaces said them)."""
    return f"turn failed ({event.kind}){retries}: {NOT_KEPT.sub('', event.message).rstrip('.')}."


@dataclass
class Folded:
    """What one event did to the entries: entries added (in order), assistant text appended (entry, chunk), earlier
    entries whose fields changed, running calls whose live output grew."""

    added: list[Entry] = field(default_factory=list)
    text: list[tuple[Entry, str]] = field(default_factory=list)
    changed: list[Entry] = field(default_factory=list)
    live: list[Entry] = field(default_factory=list)


class Transcript:
    """The conversation's entries, and the fold that grows them from events; no widgets, no I/O."""

    def __init__(self) -> None:
        self.entries: list[Entry] = []
        self.open_text: Entry | None = None
        """The assistant entry streamed text goes into; None once anything else came after it."""
        self._tools: dict[str, Entry] = {}
        self._continues = False  # the open reply was cut at a paragraph: the next text continues it in a new entry
        self._echoed: Entry | None = None  # the user entry shown before its TurnStarted arrived

    def add(self, entry: Entry) -> None:
        """Append an entry that no event made (a notice of the app's own, a manual tool run); it ends any open reply."""
        self.close_text()
        self.entries.append(entry)
        if entry.kind == "tool" and entry.call_id:
            self._tools[entry.call_id] = entry

    def echo_prompt(self, prompt: str) -> Entry:
        """Show the person's prompt at once, before the turn's TurnStarted (which then adds nothing: the app notes
        the files it attaches, in the same words as the fold of a TurnStarted does)."""
        entry = Entry("user", text=prompt)
        self.add(entry)
        self._echoed = entry
        return entry

    def tool_entry(self, call_id: str) -> Entry | None:
        return self._tools.get(call_id)

    def tool_entries(self) -> list[Entry]:
        return list(self._tools.values())

    def apply(self, event: Event) -> Folded:
        """Fold one event in; what changed tells a live view which widgets to add or refresh.

        Only an event that adds an entry, and the turn's end, close the reply text streams into: usage, catalog and
        file changes, a finished call and an authored tool arrive in their own time and leave it open."""
        if isinstance(event, TextDelta):
            return self._text(event.text)
        folded = Folded()
        if isinstance(event, ToolOutputDelta):
            entry = self._tools.get(event.call_id)
            if entry is not None and entry.result is None:
                entry.live = live_tail(entry.live, event.text)
                folded.live.append(entry)
            return folded
        if isinstance(event, ThinkingDelta):
            self._thinking(event.text, folded)
            return folded
        if isinstance(event, TurnStarted):
            self._turn_started(event, folded)
        elif isinstance(event, ToolCallStarted):
            self._new(Entry("tool", call_id=event.call_id, tool=event.name, arguments=dict(event.arguments),
                            authored=event.authored), folded)
        elif isinstance(event, ToolCallFinished):
            self._finished(event, folded)
        elif isinstance(event, ToolAuthored):
            self._authored(event, folded)
        elif isinstance(event, Notice):
            self._notice(event, folded)
        elif isinstance(event, PlanUpdated):
            self._new(Entry("notice", text="Plan\n" + checklist(event.entries), level="plan"), folded)
        elif isinstance(event, PermissionModeChanged):
            self._new(Entry("notice", text=f"Plan approved: the permission mode is now {event.mode}."), folded)
        elif isinstance(event, ApprovalDenied):
            self._new(Entry("notice", text=f"{event.name}: {event.reason}", level="warning"), folded)
        elif isinstance(event, TurnFailed):
            self._failed(event, folded)
        elif isinstance(event, TurnCancelled):
            self._stop_unfinished(CANCELLED_CALL, folded, cancelled=True)
            self._new(Entry("notice", text="Turn cancelled.", level="warning"), folded)
        elif isinstance(event, TurnFinished):
            self.close_text()
        return folded

    def _thinking(self, chunk: str, folded: Folded) -> None:
        """Thinking streams into one folded entry until anything else comes (the reply's text, a call)."""
        last = self.entries[-1] if self.entries else None
        if last is not None and last.kind == "thinking" and self.open_text is None:
            last.text += chunk
            folded.changed.append(last)
        else:
            self._new(Entry("thinking", text=chunk), folded)

    def _notice(self, event: Notice, folded: Folded) -> None:
        """A notice; the model client's next retry of the same failure updates the previous one ("retrying (2/4)")."""
        retry = RETRY.match(event.message)
        last = self.entries[-1] if self.entries else None
        previous = RETRY.match(last.text) if last is not None and last.kind == "notice" else None
        if retry is not None and previous is not None and last is not None and previous["failure"] == retry["failure"]:
            last.text = event.message
            folded.changed.append(last)
            return
        entry = Entry("notice", text=event.message, level=event.level)
        if retry is not None and self.open_text is not None:  # a reply dropped mid-way: the retry, which the model
            self.entries.append(entry)  # client resumes where the shown text stopped, goes on in that same message
            folded.added.append(entry)
            return
        self._new(entry, folded)

    def _failed(self, event: TurnFailed, folded: Folded) -> None:
        """The turn's failure; after retries of that same failure it replaces their notice (the words once, not twice)."""
        last = self.entries[-1] if self.entries else None
        retry = RETRY.match(last.text) if last is not None and last.kind == "notice" else None
        if last is not None and retry is not None and retry["failure"] == NOT_KEPT.sub("", event.message):
            count = int(retry["attempt"])
            last.text = failure_text(event, f" after {count} {'retry' if count == 1 else 'retries'}")
            last.level = "error"
            folded.changed.append(last)
            return
        self._new(Entry("notice", text=failure_text(event), level="error"), folded)

    def _new(self, entry: Entry, folded: Folded) -> None:
        self.add(entry)
        folded.added.append(entry)

    def close_text(self) -> None:
        """End the reply text streams into: text that follows starts a new entry."""
        self.open_text = None
        self._continues = False

    def _text(self, chunk: str) -> Folded:
        folded = Folded()
        current = self.open_text
        if current is not None and len(current.text) >= SEGMENT_CHARS:
            cut = paragraph_break(current.text, chunk)
            if cut is not None:
                if chunk[:cut]:
                    current.text += chunk[:cut]
                    folded.text.append((current, chunk[:cut]))
                chunk, current, self.open_text, self._continues = chunk[cut:], None, None, True
        if not chunk:
            return folded
        if current is None:
            current = Entry("assistant", continued=self._continues)
            self.entries.append(current)
            self.open_text, self._continues = current, False
            folded.added.append(current)
        current.text += chunk
        folded.text.append((current, chunk))
        return folded

    def _turn_started(self, event: TurnStarted, folded: Folded) -> None:
        """The prompt as typed, and which files went along with it (as the app noted when it was sent)."""
        echoed, self._echoed = self._echoed, None
        if echoed is not None:
            return  # shown when it was sent, and its attachments noted then
        typed, attached = split_attachments(event.prompt)
        self._new(Entry("user", text=typed), folded)
        if attached:
            self._new(Entry("notice", text=attachment_note(attached)), folded)

    def _finished(self, event: ToolCallFinished, folded: Folded) -> None:
        entry = self._tools.get(event.call_id)
        if entry is None:
            return
        entry.result = event.result + (TRUNCATION_MARK if event.truncated else "")
        entry.live = ""
        entry.is_error = event.is_error
        entry.duration_ms = event.duration_ms
        entry.authored = entry.authored or event.authored
        folded.changed.append(entry)

    def _stop_unfinished(self, result: str, folded: Folded, *, cancelled: bool) -> None:
        """Calls that never got a result: the turn was cancelled, or the session ended while they ran."""
        for entry in self._tools.values():
            if entry.result is None:
                entry.result, entry.is_error, entry.cancelled = result, True, cancelled
                folded.changed.append(entry)

    def mark_undone(self, turns: list[tuple[str, bool]]) -> list[Entry]:
        """Mark the user entries of turns /undo took back (and unmark those /redo brought back). `turns`: every
        recorded turn's (prompt, undone), oldest first; each is matched to the next user entry with its text.
        Returns the entries whose mark changed."""
        marked: list[Entry] = []
        users = iter([entry for entry in self.entries if entry.kind == "user"])
        for prompt, undone in turns:
            typed = split_attachments(prompt)[0]
            entry = next((entry for entry in users if entry.text == typed), None)
            if entry is None:
                break
            if undone != entry.undone:
                entry.undone = undone
                marked.append(entry)
        return marked

    def end_of_session(self) -> None:
        """A session read back has ended: a call still without a result was interrupted (tuiagent was killed)."""
        self._stop_unfinished(INTERRUPTED_CALL, Folded(), cancelled=False)
        self.close_text()

    def _authored(self, event: ToolAuthored, folded: Folded) -> None:
        """The call that authored it shows the source as registered, and is marked authored."""
        for entry in reversed(self.tool_entries()):
            if entry.tool in AUTHORING_TOOLS and entry.arguments.get("name") == event.name:
                entry.source = event.source
                entry.authored = True
                folded.changed.append(entry)
                return


def transcript_of(events: Iterable[Event]) -> Transcript:
    """The entries a sequence of events folds into (a resumed session)."""
    transcript = Transcript()
    for event in events:
        transcript.apply(event)
    transcript.end_of_session()
    return transcript
