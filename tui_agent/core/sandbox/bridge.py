"""The run_python request channel, host side: a sandboxed snippet asks the runtime to call an MCP tool.

The worker's private socket carries, besides the final result line, request lines
`{"bridge": {"tool": NAME, "arguments": {...}}}`; each is answered with one line
`{"ok": true, "value": ...}` or `{"ok": false, "error": "..."}`. Only the tools the bridge offers can be
named, arguments must be a JSON object, lines and calls per run are bounded, and the bridge applies the
session's permissions. Everything the snippet sends is treated as hostile input.
"""

from __future__ import annotations

import asyncio
import json
import socket
from typing import Any, Protocol

from tui_agent.core.errors import TuiAgentError

LINE_LIMIT = 1024 * 1024
MAX_CALLS_PER_RUN = 200
RESULT_LIMIT = 8 * 1024 * 1024


class SandboxBridge(Protocol):
    """What the runtime offers to sandboxed code: importable module names and the calls behind them."""

    def modules(self) -> dict[str, str]:
        """Importable name → a one-line description (the module's docstring)."""
        ...

    async def call(self, name: str, arguments: dict[str, Any]) -> Any:
        """The tool's value; raises an exception whose message goes back to the snippet."""
        ...


async def serve_channel(channel: socket.socket, bridge: SandboxBridge) -> bytes:
    """Answer bridge requests until the final result line (returned, like the plain reader) or the end of stream."""
    loop = asyncio.get_running_loop()
    buffer = b""
    calls = 0
    while True:
        newline = buffer.find(b"\n")
        if newline < 0:
            if len(buffer) > RESULT_LIMIT:
                return b""
            chunk = await loop.sock_recv(channel, 65536)
            if not chunk:
                return buffer
            buffer += chunk
            continue
        line, buffer = buffer[:newline], buffer[newline + 1:]
        request = _bridge_request(line)
        if request is None:
            return line + b"\n" + buffer  # the final result (the worker exits after writing it)
        calls += 1
        reply = await _answer(bridge, request, calls)
        try:
            await loop.sock_sendall(channel, (json.dumps(reply, default=str) + "\n").encode())
        except OSError:
            return b""


def _bridge_request(line: bytes) -> Any:
    if len(line) > LINE_LIMIT or not line.startswith(b'{"bridge"'):
        return None
    try:
        decoded = json.loads(line)
    except ValueError:
        return {}
    return decoded.get("bridge", {}) if isinstance(decoded, dict) else {}


async def _answer(bridge: SandboxBridge, request: Any, calls: int) -> dict[str, Any]:
    if calls > MAX_CALLS_PER_RUN:
        return {"ok": False, "error": f"more than {MAX_CALLS_PER_RUN} MCP calls in one run_python snippet"}
    name = request.get("tool") if isinstance(request, dict) else None
    arguments = request.get("arguments", {}) if isinstance(request, dict) else None
    if not isinstance(name, str) or name not in bridge.modules():
        return {"ok": False, "error": f"no MCP tool named {name!r} is offered to this run"}
    if not isinstance(arguments, dict):
        return {"ok": False, "error": "arguments must be keyword arguments (a JSON object)"}
    try:
        value = await bridge.call(name, arguments)
    except (TuiAgentError, LookupError, OSError, RuntimeError, ValueError) as error:  # the tool's own error
        # (RuntimeError), a refusal (PermissionError), a dead server (McpServerError): the snippet gets the message
        return {"ok": False, "error": str(error) or type(error).__name__}
    try:
        text = json.dumps({"ok": True, "value": value})
    except (TypeError, ValueError):
        return {"ok": True, "value": repr(value)}
    if len(text) > RESULT_LIMIT:
        return {"ok": False, "error": f"the result of {name} is over {RESULT_LIMIT // (1024 * 1024)} MB"}
    return {"ok": True, "value": value}
