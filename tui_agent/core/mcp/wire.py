"""JSON-RPC errors for lines that are not messages: -32700 for text that is not JSON, -32600 for JSON that is
not a JSON-RPC message (the SDK's stdio transport hands both on as exceptions, which its dispatcher only logs)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage
from pydantic import ValidationError


def error_for(problem: Exception) -> types.JSONRPCError:
    """The error response (id null: a line that did not parse has no id to answer)."""
    not_json = isinstance(problem, ValidationError) and any(e.get("type") == "json_invalid" for e in problem.errors())
    if not_json:
        error = types.ErrorData(code=types.PARSE_ERROR, message="Parse error: the line is not valid JSON")
    else:
        error = types.ErrorData(code=types.INVALID_REQUEST, message="Invalid Request: not a JSON-RPC 2.0 message")
    return types.JSONRPCError(jsonrpc="2.0", id=None, error=error)


@asynccontextmanager
async def answering_malformed(read_stream: Any, write_stream: Any) -> AsyncIterator[Any]:
    """A read stream of the good messages; each malformed line is answered on `write_stream` meanwhile."""
    sender, receiver = anyio.create_memory_object_stream[SessionMessage | Exception](0)

    async def relay() -> None:
        async with sender:
            async for item in read_stream:
                if isinstance(item, Exception):
                    await write_stream.send(SessionMessage(error_for(item)))
                else:
                    await sender.send(item)

    async with anyio.create_task_group() as group:
        group.start_soon(relay)
        try:
            yield receiver
        finally:
            group.cancel_scope.cancel()
