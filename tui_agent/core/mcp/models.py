"""What an MCP server offers and answers, without the SDK (so a session without MCP servers never imports it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tui_agent.core.content import JsonSchema, ResultPart
from tui_agent.core.errors import TuiAgentError


@dataclass(frozen=True)
class RemoteTool:
    """A tool as the MCP server lists it."""

    name: str
    description: str
    input_schema: JsonSchema


@dataclass(frozen=True)
class CallOutcome:
    """An MCP tool's result: `text` for the model, `value` for run_python (structured content, JSON text, or text)."""

    text: str
    value: Any
    is_error: bool
    blocks: tuple[ResultPart, ...] = ()
    """Images (and PDFs) as Messages API content blocks, sent to the model after the text."""


class McpServerError(TuiAgentError):
    """A call could not reach the server (not started, exited, timed out); the message says which and why."""
