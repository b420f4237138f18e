"""The conversation of one agent: its messages and the operations a turn performs on them, each written to the session.

A prompt enters the messages at once but reaches the session file only when the model answered it (`log_prompt`),
so a request that fails before any answer takes it back without a trace (`take_back_prompt`). Every other change
(a reply, tool results, notes) is written as it happens. Requests are derived from `messages` (history.py).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from tui_agent.core.agent.sessions import SessionLog
from tui_agent.core.agent.toolbase import ToolOutput
from tui_agent.core.agent.toolresults import result_block

if TYPE_CHECKING:
    from tui_agent.core.tending.suggestions import SuggestionBook

CANCELLED_RESULT = "cancelled by the user before this call finished"


class Conversation:
    """`messages` as the API takes them (dicts), the session they are written to, the suggestion book for notes."""

    def __init__(self, messages: list[dict[str, Any]], session: SessionLog, suggestions: SuggestionBook | None) -> None:
        self.messages = messages
        self.session = session
        self.suggestions = suggestions
        self.unlogged_prompt: tuple[int, int] | None = None  # where this turn's prompt sits, until the session has it

    def record(self, message: dict[str, Any]) -> None:
        self.messages.append(message)
        self.session.append_message(message)

    def add_user_content(self, blocks: list[dict[str, Any]]) -> None:
        """Tool results or a note; a repeated-chain suggestion rides along. A turn stopped by a cancel or a limit ended
        on a user message: the next content continues it."""
        turn_running = any(block.get("type") == "tool_result" for block in blocks)
        blocks = blocks + suggestion_blocks(self.suggestions, turn_running=turn_running)
        if self.messages and self.messages[-1]["role"] == "user":
            self.messages[-1]["content"].extend(blocks)
            self.session.append_message({"role": "user", "content": blocks})
        else:
            self.record({"role": "user", "content": blocks})

    def add_note_to_prompt(self, block: dict[str, Any]) -> None:
        """A note (catalog changes) after the last user message; written now, or with the prompt it follows."""
        self.messages[-1]["content"].append(block)
        if self.unlogged_prompt is None:
            self.session.append_message({"role": "user", "content": [block]})

    def begin_prompt(self, prompt: str) -> None:
        blocks = [{"type": "text", "text": prompt}, *suggestion_blocks(self.suggestions, turn_running=False)]
        if self.messages and self.messages[-1]["role"] == "user":
            self.messages[-1]["content"].extend(blocks)
        else:
            self.messages.append({"role": "user", "content": blocks})
        self.unlogged_prompt = (len(self.messages) - 1, len(self.messages[-1]["content"]) - len(blocks))

    def log_prompt(self) -> None:
        """Write the prompt (and any note that followed it) to the session: the model answered it."""
        if self.unlogged_prompt is not None:
            (index, position), self.unlogged_prompt = self.unlogged_prompt, None
            self.session.append_message({"role": "user", "content": self.messages[index]["content"][position:]})

    def take_back_prompt(self) -> bool:
        """Remove a prompt the model never answered; False when it had been answered (nothing changes)."""
        if self.unlogged_prompt is None:
            return False
        (index, position), self.unlogged_prompt = self.unlogged_prompt, None
        del self.messages[index]["content"][position:]
        if not self.messages[index]["content"]:
            del self.messages[index]
        return True

    def close_failed_turn(self, message: str) -> None:
        """An answered turn stopped on an error: an assistant line says so, so the next prompt starts a new message."""
        if self.messages and self.messages[-1]["role"] == "user":
            self.record({"role": "assistant", "content": [{"type": "text", "text": f"[this turn stopped on an error: {message}]"}]})

    def close_after_cancel(self, partial_text: list[str], pending: list[dict[str, Any]], answered: list[dict[str, Any]]) -> None:
        """Leave the transcript consistent: keep the prompt and the shown text, answer every tool_use."""
        self.log_prompt()
        if partial_text and "".join(partial_text).strip():
            self.record({"role": "assistant", "content": [{"type": "text", "text": "".join(partial_text) + "\n[interrupted by the user]"}]})
        if pending:
            done = {block["tool_use_id"] for block in answered}
            missing = [result_block(call["id"], ToolOutput(CANCELLED_RESULT, is_error=True)) for call in pending if call["id"] not in done]
            self.add_user_content(answered + missing)
        self.session.append({"type": "cancelled", "time": time.time()})


def suggestion_blocks(book: SuggestionBook | None, *, turn_running: bool) -> list[dict[str, Any]]:
    """The book's note for the next request; without a book (no catalog: a restricted project) the tending code is
    not imported."""
    if book is None:
        return []
    from tui_agent.core.tending.suggestions import suggestion_blocks as note_blocks

    return note_blocks(book, turn_running=turn_running)
