"""/compact: one request asks the model to summarize the conversation; the summary then replaces the conversation.

`summarize` makes the request and returns the replacement without touching anything; `compact_agent` applies it to
an agent (its messages, usage and session file). A failure (a ModelError, a cancel) leaves the conversation as it was.
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tui_agent.core.agent.context_limit import shorten_more
from tui_agent.core.agent.history import request_messages, without_thinking
from tui_agent.core.agent.model import ModelError, ModelReply
from tui_agent.core.agent.frozen_prefix import with_breakpoints
from tui_agent.core.content import ApiMessage, TextBlock, ToolDefinition, text_block
from tui_agent.core.errors import ErrorKind, TuiAgentError
from tui_agent.core.events import Notice, Usage

if TYPE_CHECKING:
    from tui_agent.core.agent.loop import Agent
    from tui_agent.core.agent.pricing import RequestUsage
    from tui_agent.core.agent.thinking import ThinkingConfig
    from tui_agent.core.protocols import Model

SUMMARY_INSTRUCTION = (
    "The conversation above is about to be replaced by a summary of it, to free the context window. Write that summary "
    "now, as plain text: do not call any tool. Keep everything needed to continue the work without the conversation: "
    "the person's requests and intent (quote their exact words where it matters), decisions made and why, the files "
    "read, changed or created (paths) and what changed in them, the tools authored or used, commands run and their "
    "outcome, errors met and how they were fixed, what is still open, and the next step that was about to be taken."
)
SUMMARY_HEADER = "[This conversation was compacted (/compact). A summary of it so far, written by the assistant:]\n\n"
COMPACTED = "Conversation compacted (/compact): the model continues from its summary"


class CompactError(TuiAgentError):
    """The summary could not be made: the conversation is unchanged. `message` says why."""


@dataclass(frozen=True)
class Summary:
    """The model's summary, the messages that replace the conversation, and what the request cost."""

    text: str
    replacement: list[ApiMessage]
    usage: RequestUsage
    notices: list[Notice] = field(default_factory=list)


def summary_request(messages: list[ApiMessage], focus: str = "") -> list[ApiMessage]:
    """The history as the API accepts it, with the summarizing instruction (and the person's focus) as the last user
    content: appended to a last user message (tool results after a cancel), or as a user message of its own."""
    instruction = SUMMARY_INSTRUCTION + (f"\n\nThe person asked the summary to focus on: {focus.strip()}" if focus.strip() else "")
    sendable = request_messages(messages)
    block = text_block(instruction)
    if sendable and sendable[-1]["role"] == "user":
        return [*sendable[:-1], {**sendable[-1], "content": [*sendable[-1]["content"], block]}]
    return [*sendable, {"role": "user", "content": [block]}]


def replacement_messages(summary: str) -> list[ApiMessage]:
    """The conversation after /compact: the summary as one user message (the next prompt joins it)."""
    return [{"role": "user", "content": [text_block(SUMMARY_HEADER + summary.strip())]}]


async def summarize(client: Model, *, system: list[TextBlock], tools: list[ToolDefinition], messages: list[ApiMessage],
                    thinking: ThinkingConfig | None, focus: str = "") -> Summary:
    """One request for a summary of `messages` (not modified). The same system prompt and tools as the conversation's
    requests (a history with tool calls needs its tools defined; its cached prefix is reused), no tool_choice (which
    thinking forbids forcing). Too long even for that: old tool results are shortened in a copy, and it is asked again.
    Raises CompactError, or CancelledError when cancelled."""
    if not messages:
        raise CompactError("nothing to compact: the conversation is empty")
    notices: list[Notice] = []
    history, level = messages, 0
    while True:
        try:
            reply = await _request(client, system, tools, summary_request(history, focus), thinking, notices)
            break
        except ModelError as error:
            if error.kind is not ErrorKind.CONTEXT_TOO_LONG:
                raise CompactError(error.message) from error
            history = copy.deepcopy(history) if history is messages else history
            count, level = shorten_more(history, level)  # too long even to summarize: old tool results shortened first
            if not count:
                raise CompactError(f"{error.message}; even with old tool results shortened") from error
            notices.append(Notice(f"too long to summarize whole: shortened {count} old tool results for the summary", "warning"))
    if reply is None:
        raise CompactError("the model's reply ended without a message")
    text = reply.text.strip()
    if not text:
        what = "called a tool" if reply.tool_uses else f"gave no text (stop reason {reply.stop_reason})"
        raise CompactError(f"the model {what} instead of writing a summary")
    if reply.stop_reason == "max_tokens":
        raise CompactError("the summary was cut off at the output limit (max_tokens)")
    return Summary(text, replacement_messages(text), reply.usage, notices)


async def _request(client: Model, system: list[TextBlock], tools: list[ToolDefinition], sendable: list[ApiMessage],
                   thinking: ThinkingConfig | None, notices: list[Notice]) -> ModelReply | None:
    if thinking is not None and thinking.strips_thinking(client.model):
        sendable = without_thinking(sendable)
    sendable, _ = with_breakpoints(sendable, None)
    reply: ModelReply | None = None
    async for item in client.stream_reply(system=system, tools=tools, messages=sendable, thinking=thinking):
        if isinstance(item, ModelReply):
            reply = item
        elif isinstance(item, Notice):
            notices.append(item)
    return reply


async def compact_agent(agent: Agent, focus: str = "") -> Summary:
    """Summarize the agent's conversation and replace it with the summary: its messages, its usage totals, and the
    session file (a `clear` record, the summary message, the request's Usage event), so /resume continues from the
    summary (its transcript shows the summary as a notice). Raises CompactError (or CancelledError) with the conversation unchanged."""
    system, tools = agent.build_request()
    summary = await summarize(agent.client, system=system, tools=tools, messages=agent.messages, thinking=agent.thinking, focus=focus)
    agent.usage.add(summary.usage)
    usage = agent.usage
    event = Usage(summary.usage.input_tokens, summary.usage.output_tokens, summary.usage.cache_read_tokens,
                  summary.usage.cache_write_tokens, summary.usage.cost_usd, usage.cost_usd, usage.input_tokens,
                  usage.output_tokens, usage.cache_read_tokens, usage.cache_write_tokens)
    session = agent.session
    session.append_event(event)
    session.append_event(Notice(f"{COMPACTED}:\n\n{summary.text}"))  # what a resumed transcript shows at this point
    session.append({"type": "clear", "reason": "compact", "time": time.time()})  # load_messages starts again here
    for message in summary.replacement:
        session.append_message(message)
    agent.messages = [ApiMessage(role=message["role"], content=message["content"]) for message in summary.replacement]  # a new list: the prompt plan is frozen again
    return summary
