"""What may stand around a tool call from outside the agent (the Claude Agent SDK's hooks and `updatedInput`)."""

from __future__ import annotations

from typing import Protocol

from tui_agent.core.agent.toolbase import ToolContext, ToolOutput
from tui_agent.core.errors import TuiAgentError
from tui_agent.core.content import JsonObject


class InputReplaced(TuiAgentError):
    """Raised by an approval callback whose approver allowed the call with another input (the Claude Agent SDK's
    `updatedInput`): the executor starts the call again with `arguments`, checked like the model's input."""

    def __init__(self, arguments: JsonObject) -> None:
        super().__init__("the approver replaced the call's input")
        self.arguments = arguments


class CallGate(Protocol):
    """Consulted around every call (the Claude Agent SDK's PreToolUse / PostToolUse hooks): `before_call` returns the
    arguments to run with or raises ToolFailure to refuse the call; `after_call` may change the output."""

    async def before_call(self, context: ToolContext, arguments: JsonObject) -> JsonObject: ...

    async def after_call(self, context: ToolContext, arguments: JsonObject, output: ToolOutput) -> ToolOutput: ...
