"""Claude Code's `--input-format stream-json`: user messages and control requests on stdin, control requests of our
own (can_use_tool) answered there too; `initialize`, `interrupt`, `set_permission_mode`, `set_model` handled."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import threading
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import IO

from tui_agent.core.content import JsonObject, json_object

Writer = Callable[[Mapping[str, object]], None]
Handler = Callable[[JsonObject], Awaitable[Mapping[str, object] | None]]


def prompt_text(message: JsonObject) -> str:
    """The text of a stream-json user message (`content` a string, or text blocks)."""
    content = json_object(message.get("message")).get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(block.get("text", "")) for block in content if isinstance(block, dict) and block.get("type") == "text")
    return ""


@dataclass
class ControlChannel:
    """Reads stdin line by line (in a thread: stdin may be a pipe, a file or a terminal), queues prompts, answers
    control requests through `handlers` (subtype → coroutine returning the response payload), and sends ours."""

    write: Writer
    handlers: dict[str, Handler] = field(default_factory=dict)
    prompts: asyncio.Queue[str | None] = field(default_factory=asyncio.Queue)
    """The prompts in order; None once stdin is closed."""
    problems: list[str] = field(default_factory=list)
    _pending: dict[str, asyncio.Future[JsonObject]] = field(default_factory=dict)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _tasks: set[asyncio.Task[None]] = field(default_factory=set)

    def start(self, stdin: IO[str]) -> None:
        loop = asyncio.get_running_loop()

        def read() -> None:
            with contextlib.suppress(OSError, ValueError):  # stdin closed under us
                for line in stdin:
                    loop.call_soon_threadsafe(self._line, line)
            loop.call_soon_threadsafe(self._closed)

        threading.Thread(target=read, name="stream-json stdin", daemon=True).start()

    def _closed(self) -> None:
        self.prompts.put_nowait(None)
        for future in self._pending.values():
            if not future.done():
                future.set_exception(EOFError("stdin closed before the control response arrived"))

    def _line(self, line: str) -> None:
        if not line.strip():
            return
        try:
            message = json.loads(line)
        except ValueError:
            self.problems.append(f"stream-json input: not JSON, ignored: {line.strip()[:120]}")
            return
        kind = message.get("type") if isinstance(message, dict) else None
        if kind == "user":
            self.prompts.put_nowait(prompt_text(message))
        elif kind == "control_request":
            task = asyncio.get_running_loop().create_task(self._answer(message))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        elif kind == "control_response":
            self._resolve(json_object(message.get("response")))
        elif kind not in ("keep_alive", "control_cancel_request", "update_environment_variables"):
            self.problems.append(f"stream-json input: message type {kind!r} is not understood, ignored")

    async def _answer(self, message: JsonObject) -> None:
        request_id = message.get("request_id")
        request = json_object(message.get("request"))
        handler = self.handlers.get(str(request.get("subtype")))
        try:
            if handler is None:
                raise ValueError(f"tuiagent does not support the control request {request.get('subtype')!r}")
            payload = await handler(request)
        except Exception as error:  # the requester hears why; the run goes on
            self.write({"type": "control_response",
                        "response": {"subtype": "error", "request_id": request_id, "error": str(error)}})
            return
        self.write({"type": "control_response",
                    "response": {"subtype": "success", "request_id": request_id, "response": payload or {}}})

    def _resolve(self, response: JsonObject) -> None:
        future = self._pending.pop(str(response.get("request_id")), None)
        if future is None or future.done():
            return
        if response.get("subtype") == "error":
            future.set_exception(RuntimeError(str(response.get("error") or "the control request failed")))
        else:
            future.set_result(json_object(response.get("response")))

    async def request(self, payload: JsonObject) -> JsonObject:
        """Send a control request of ours (e.g. can_use_tool) and wait for the answer on stdin."""
        request_id = f"tuiagent_{os.getpid()}_{next(self._ids)}"
        future: asyncio.Future[JsonObject] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        self.write({"type": "control_request", "request_id": request_id, "request": payload})
        try:
            return await future
        finally:
            self._pending.pop(request_id, None)
