"""Sandbox RunResults and pipeline errors as MCP CallToolResults."""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types

from tui_agent.core.agent.exec_tools import format_run_result
from tui_agent.core.catalog.errors import PipelineError
from tui_agent.core.mcp.definitions import structured_content
from tui_agent.core.sandbox import RunResult


def text_result(text: str, *, is_error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=is_error)


def run_result(result: RunResult, *, name: str = "", output_schema: dict[str, Any] | None = None) -> types.CallToolResult:
    """The value (JSON text), the output and any error, as the agent sees them; isError when the run failed.

    With an output schema a good value is also `structuredContent` (`{"result": value}`); a value that does not
    match the tool's own return annotation is an error, since a declared schema promises structured content."""
    output = format_run_result(result)
    if output_schema is None or output.is_error:
        return text_result(output.text, is_error=output.is_error)
    structured = None if result.value_is_repr else structured_content(result.value, output_schema)
    if structured is None:
        return text_result(f"{name} returned a value that does not match its return annotation "
                           f"(its output schema: {json.dumps(output_schema['properties']['result'])})\n{output.text}",
                           is_error=True)
    return types.CallToolResult(content=[types.TextContent(type="text", text=output.text)],
                                structured_content=structured, is_error=False)


def pipeline_error_result(name: str, error: PipelineError) -> types.CallToolResult:
    """A broken tool's pipeline error (stage, message, line) as an isError result."""
    line = f" (line {error.line})" if error.line else ""
    details = json.dumps(error.to_dict(), default=str)
    return text_result(f"the tool {name} is broken: [{error.stage}] {error.message}{line}\n{details}", is_error=True)
