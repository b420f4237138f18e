"""The conversation of one agent: its typed turns, and the operations a turn of the loop performs on them.

A prompt enters the turns at once but reaches the session file only when the model answered it (`log_prompt`), so a
request that fails before any answer takes it back without a trace (`take_back_prompt`); turns appended meanwhile (a
catalog note) wait with it. Every other turn is written as it is appended. Requests are derived from the turns
(request.py); nothing outside this class changes them.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from tui_agent.core.agent.context_limit import shorten_more
from tui_agent.core.agent.session_turns import ROLLBACK_RECORD, THINKING_DROPPED_RECORD
from tui_agent.core.agent.sessions import SessionLog
from tui_agent.core.agent.toolbase import ToolOutput
from tui_agent.core.agent.toolresults import result_block
from tui_agent.core.agent.turns import AssistantTurn, Block, ToolResults, Turn, UserTurn, merged_messages, message_of
from tui_agent.core.content import ApiMessage, ContentBlock, text_block

if TYPE_CHECKING:
    from tui_agent.core.tending.suggestions import SuggestionBook

CANCELLED_RESULT = "cancelled by the user before this call finished"
RESULTS_CLOSED = "[the turn that made these calls ended here]"


class Conversation:
    """The turns since the conversation started, the session they are written to, the suggestion book for notes."""

    def __init__(self, turns: Iterable[Turn], session: SessionLog, suggestions: SuggestionBook | None) -> None:
        self.turns: list[Turn] = list(turns)
        self.session = session
        self.suggestions = suggestions
        self.pending_prompt: UserTurn | None = None  # this turn's prompt, until the model answered it
        self._unwritten: set[Turn] = set()  # the pending prompt and what was appended after it

    @property
    def messages(self) -> list[ApiMessage]:
        """The turns as API messages (same-role neighbours merged); a copy: changing it changes nothing."""
        return merged_messages(self.turns)

    def replace(self, turns: Iterable[Turn]) -> None:
        """Start from these turns (another session, or none after /clear); the session file is not written."""
        self.turns = list(turns)
        self.pending_prompt = None
        self._unwritten.clear()

    # ------------------------------------------------------------------ appending

    def append(self, turn: Turn) -> Turn:
        self.turns.append(turn)
        if self.pending_prompt is not None:
            self._unwritten.add(turn)
        else:
            self.session.append_turn(turn)
        return turn

    def begin_prompt(self, prompt: str) -> UserTurn:
        turn = UserTurn((text_block(prompt), *suggestion_blocks(self.suggestions, turn_running=False)))
        self.turns.append(turn)
        self._unwritten.add(turn)
        self.pending_prompt = turn
        return turn

    def log_prompt(self) -> None:
        """Write the prompt (and what followed it) to the session: the model answered it."""
        if self.pending_prompt is None:
            return
        start = self._index(self.pending_prompt)
        self.pending_prompt = None
        for turn in self.turns[start:]:
            if turn in self._unwritten:
                self._unwritten.discard(turn)
                self.session.append_turn(turn)

    def add_results(self, results: Sequence[Block]) -> ToolResults:
        """The results of a reply's tool calls; a repeated-chain suggestion rides along."""
        turn = ToolResults((*results, *suggestion_blocks(self.suggestions, turn_running=True)))
        self.append(turn)
        return turn

    def add_note(self, text: str, *, with_suggestion: bool = True) -> UserTurn:
        """Tell the model something with the next request (an undo, a catalog change, a shell command)."""
        extra = suggestion_blocks(self.suggestions, turn_running=False) if with_suggestion else []
        turn = UserTurn((text_block(text), *extra), "note")
        self.append(turn)
        return turn

    # ------------------------------------------------------------------ taking back, closing

    def rollback_to(self, turn: Turn) -> list[Turn]:
        """Drop `turn` and every turn after it; the session file records how many of them it held."""
        start = self._index(turn)
        dropped = self.turns[start:]
        del self.turns[start:]
        written = [kept for kept in dropped if kept not in self._unwritten]
        self._unwritten.difference_update(dropped)
        if self.pending_prompt in dropped:
            self.pending_prompt = None
        if written:
            self.session.append({"type": ROLLBACK_RECORD, "drop": len(written), "time": time.time()})
        return dropped

    def drop_last_turn(self) -> Turn | None:
        return self.rollback_to(self.turns[-1])[0] if self.turns else None

    def take_back_prompt(self) -> bool:
        """Remove a prompt the model never answered (and what followed it); False when it had been answered."""
        if self.pending_prompt is None:
            return False
        self.rollback_to(self.pending_prompt)
        return True

    def close_failed_turn(self, message: str) -> None:
        """An answered turn stopped on an error: an assistant line says so, so the next prompt starts a new message."""
        if self.turns and self.turns[-1].role == "user":
            self.append(AssistantTurn((text_block(f"[this turn stopped on an error: {message}]"),)))

    def cancel(self, partial_text: str, results: Sequence[Block]) -> None:
        """Leave the conversation valid after a cancel: the prompt stays, every call of the last reply is answered
        (`results` of the calls that finished, the others as cancelled), the text shown so far is kept."""
        self.log_prompt()
        last = self.turns[-1] if self.turns else None
        if isinstance(last, AssistantTurn) and last.tool_uses:
            done = {block["tool_use_id"] for block in results if block["type"] == "tool_result"}
            missing = [result_block(call["id"], ToolOutput(CANCELLED_RESULT, is_error=True))
                       for call in last.tool_uses if call["id"] not in done]
            self.add_results([*results, *missing])
        if partial_text.strip():
            self.append(AssistantTurn((text_block(partial_text + "\n[interrupted by the user]"),)))
        self.session.append({"type": "cancelled", "time": time.time()})

    # ------------------------------------------------------------------ changing earlier turns

    def shorten(self, level: int) -> tuple[int, int]:
        """Shorten old tool results and inputs (context_limit.shorten_more): (how many, the next level)."""
        messages = copy.deepcopy([message_of(turn) for turn in self.turns])
        count, level = shorten_more(messages, level)
        for index, (turn, message) in enumerate(zip(list(self.turns), messages, strict=True)):
            if message["content"] != list(turn.blocks):
                self._swap(index, replace(turn, blocks=tuple(message["content"])))
        return count, level

    def in_flight(self) -> AssistantTurn | None:
        """The assistant turn whose tool results end the conversation: the next request continues it."""
        if len(self.turns) >= 2 and isinstance(self.turns[-1], ToolResults) and isinstance(self.turns[-2], AssistantTurn):
            return self.turns[-2]
        return None

    def drop_earlier_thinking(self) -> int:
        """Leave out the thinking of every assistant turn but the one in flight (the API allows that for earlier
        turns, not for the turn a tool result continues); how many turns lost some. With none in flight the session
        file records it, so that a resumed session leaves it out too."""
        keep = self.in_flight()
        stripped: list[Turn] = []
        for index, turn in enumerate(list(self.turns)):
            if isinstance(turn, AssistantTurn) and turn is not keep and turn.thinking:
                self._swap(index, stripped_turn := turn.without_thinking())
                stripped.append(stripped_turn)
        if stripped and keep is None:
            self.session.append({"type": THINKING_DROPPED_RECORD, "time": time.time()})
            self._close_results_before_prompt(stripped)
        return len(stripped)

    def _close_results_before_prompt(self, stripped: list[Turn]) -> None:
        """A turn that stopped after its tool results (a cancel, max_turns) has the prompt join its results in one user
        message, which the API reads as continuing that turn, whose thinking it then requires. When that thinking was
        left out, an assistant line ends the turn first, so the prompt starts a new one."""
        prompt = self.pending_prompt
        index = self._index(prompt) if prompt is not None else 0
        if index >= 2 and isinstance(self.turns[index - 1], ToolResults) and self.turns[index - 2] in stripped:
            closing = AssistantTurn(({"type": "text", "text": RESULTS_CLOSED},))
            self.turns.insert(index, closing)
            self.session.append_turn(closing)

    def _swap(self, index: int, turn: Turn) -> None:
        old = self.turns[index]
        self.turns[index] = turn
        if old in self._unwritten:
            self._unwritten.discard(old)
            self._unwritten.add(turn)
        if old is self.pending_prompt and isinstance(turn, UserTurn):
            self.pending_prompt = turn

    def _index(self, turn: Turn) -> int:
        for index, candidate in enumerate(self.turns):
            if candidate is turn:
                return index
        raise ValueError("that turn is not in the conversation")


def suggestion_blocks(book: SuggestionBook | None, *, turn_running: bool) -> list[ContentBlock]:
    """The book's note for the next request; without a book (no catalog: a restricted project) the tending code is
    not imported."""
    if book is None:
        return []
    from tui_agent.core.tending.suggestions import suggestion_blocks as note_blocks

    return note_blocks(book, turn_running=turn_running)
