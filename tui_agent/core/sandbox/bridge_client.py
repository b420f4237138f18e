"""The run_python request channel, sandbox side (stdlib only): MCP tools importable as modules that ask the runtime."""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import json
import os
import sys
import threading
import types
from typing import Any


class McpToolError(Exception):
    """The MCP tool (or the runtime) answered with an error."""


class BridgeChannel:
    """Sends one request line on the worker's private channel and reads one reply line, one call at a time."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.lock = threading.Lock()

    def call(self, name: str, arguments: dict[str, Any]) -> Any:
        payload = (json.dumps({"bridge": {"tool": name, "arguments": arguments}}) + "\n").encode()
        with self.lock:
            view = memoryview(payload)
            while view:
                view = view[os.write(self.fd, view):]
            reply = b""
            while not reply.endswith(b"\n"):
                chunk = os.read(self.fd, 65536)
                if not chunk:
                    raise McpToolError("the runtime closed the channel")
                reply += chunk
        answer = json.loads(reply)
        if not answer.get("ok"):
            raise McpToolError(answer.get("error", "the MCP call failed"))
        return answer.get("value")


class BridgeFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """`import mcp__server__tool` gives a module with a function of the same name that calls the tool."""

    def __init__(self, channel: BridgeChannel, tools: dict[str, str]) -> None:
        self.channel = channel
        self.tools = tools

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname not in self.tools:
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec: Any) -> types.ModuleType | None:
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        name = module.__name__
        channel = self.channel

        def call(**arguments: Any) -> Any:
            return channel.call(name, arguments)

        call.__name__ = call.__qualname__ = name
        call.__doc__ = self.tools[name]
        module.__doc__ = self.tools[name]
        module.McpToolError = McpToolError  # type: ignore[attr-defined]
        setattr(module, name, call)


def install(fd: int, tools: dict[str, str]) -> None:
    sys.meta_path.insert(0, BridgeFinder(BridgeChannel(fd), {str(k): str(v) for k, v in tools.items()}))
