"""Sandbox RunResults and pipeline errors as MCP CallToolResults."""

from __future__ import annotations

import json

import mcp_types as types

from tui_agent.core.agent.exec_tools import format_run_result
from tui_agent.core.catalog.errors import PipelineError
from tui_agent.core.sandbox.policy import RunResult


def text_result(text: str, *, is_error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=is_error)


def run_result(result: RunResult) -> types.CallToolResult:
    """The value (JSON text), the output and any error, as the agent sees them; isError when the run failed."""
    output = format_run_result(result)
    return text_result(output.text, is_error=output.is_error)


def pipeline_error_result(name: str, error: PipelineError) -> types.CallToolResult:
    """A broken tool's pipeline error (stage, message, line) as an isError result."""
    line = f" (line {error.line})" if error.line else ""
    details = json.dumps(error.to_dict(), default=str)
    return text_result(f"the tool {name} is broken: [{error.stage}] {error.message}{line}\n{details}", is_error=True)
