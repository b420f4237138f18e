"""An in-process model that plays scripted replies through the Model protocol (fast tests of the loop and the UI).

    model = ScriptedModel()                                  # or the `scripted` fixture (tests/conftest.py)
    model.enqueue(reply(text("Looking."), tool_use("read_file", {"path": "README.md"})), reply(text("Done.")))
    gate = model.hold(reply(text("Slow.")))                  # streams once the test sets `gate`
    model.enqueue(refusal())                                 # a 400, as the real client words it
    app = make_app(repo, client=model)                       # tests/ui_support.py
    model.requests[-1].last_user_text(), model.requests[0]["messages"]

The replies are those of the fake Messages API (tests/fake_api/script.py: text and tool_use blocks, `usage`,
`delay_s`); what only the wire has (HTTP errors, broken streams, thinking, web search) stays with that server.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from tests.fake_api.recorded import RecordedRequest
from tests.fake_api.script import Block, Reply
from tui_agent.core.agent.model import ModelError, ModelReply
from tui_agent.core.agent.pricing import RequestUsage, request_usage
from tui_agent.core.errors import ErrorKind
from tui_agent.core.events import Event, TextDelta

TEXT_CHUNK = 12
"""Characters per streamed text delta (as the fake server's frames)."""


class ScriptedRequest(RecordedRequest):
    """One request the agent made, read like the fake server's (`.messages`, `.last_user_text()`) or as a dict."""

    def __getitem__(self, key: str) -> Any:
        return self.body[key]


@dataclass
class Scripted:
    """One scripted outcome: a reply (streamed `delay_s` apart per chunk; held at `held_at` characters of its text until
    `gate` is set) or an error."""

    outcome: ModelReply | ModelError
    delay_s: float = 0.0
    gate: asyncio.Event | None = None
    held_at: int = 0

    async def hold_at(self, streamed: int) -> None:
        """Wait for the gate once `streamed` characters have gone out (then never again)."""
        if self.gate is not None and streamed >= self.held_at:
            await self.gate.wait()
            self.gate = None


@dataclass
class ScriptedModel:
    """Replies in order; each request (system, tools, messages) is kept, deep-copied, for assertions."""

    replies: deque[Scripted] = field(default_factory=deque)
    model: str = "scripted"
    base_url: str = "in-process"
    max_tokens: int = 4096
    requests: list[ScriptedRequest] = field(default_factory=list)
    respond: Callable[[ScriptedRequest], Reply | ModelError] | None = None
    """Decides the reply from the request once the queue is empty (as the fake server's `respond_with`)."""

    def say(self, *blocks: dict[str, Any], stop_reason: str | None = None) -> ScriptedModel:
        uses_tools = any(block["type"] == "tool_use" for block in blocks)
        reason = stop_reason or ("tool_use" if uses_tools else "end_turn")
        self.replies.append(Scripted(ModelReply(list(blocks), reason, RequestUsage(input_tokens=10, output_tokens=5))))
        return self

    def fail(self, kind: str, message: str) -> ScriptedModel:
        self.replies.append(Scripted(ModelError(ErrorKind(kind), message)))
        return self

    def enqueue(self, *responses: Reply | ModelError) -> None:
        """The fake server's replies (text and tool_use blocks), or ModelErrors the agent gets as raised."""
        self.replies.extend(self._scripted(response) for response in responses)

    def respond_with(self, decide: Callable[[ScriptedRequest], Reply | ModelError] | None) -> None:
        """Decide replies from the request once the queue is empty (None to switch off), as the fake server's."""
        self.respond = decide

    def hold(self, response: Reply, *, after_chars: int = 0) -> asyncio.Event:
        """Enqueue `response`, streamed (past its first `after_chars` characters of text) only once the returned event
        is set: a turn kept running, or a reply stopped mid-stream, while a test acts."""
        gate = asyncio.Event()
        self.replies.append(Scripted(self._scripted(response).outcome, gate=gate, held_at=after_chars))
        return gate

    async def stream_reply(
        self, *, system: list[Any], tools: list[Any], messages: list[Any], thinking: Any = None,
    ) -> AsyncIterator[Event | ModelReply]:
        body = {"model": self.model, "max_tokens": self.max_tokens, "system": system, "tools": tools,
                "messages": messages, "thinking": thinking}
        request = ScriptedRequest(path="/v1/messages", headers={}, body=copy.deepcopy(body))
        self.requests.append(request)
        scripted = self._next(request)
        if isinstance(scripted.outcome, ModelError):
            raise scripted.outcome
        streamed = 0
        for block in scripted.outcome.content:
            if block["type"] != "text":
                await asyncio.sleep(scripted.delay_s)
                continue
            for start in range(0, len(block["text"]), TEXT_CHUNK):
                await scripted.hold_at(streamed)
                await asyncio.sleep(scripted.delay_s)  # 0: the event loop runs between deltas, as with a socket
                yield TextDelta(chunk := block["text"][start:start + TEXT_CHUNK])
                streamed += len(chunk)
        await scripted.hold_at(streamed)
        spent = scripted.outcome.usage  # priced for the model the agent runs now (it may have switched)
        yield dataclasses.replace(scripted.outcome, usage=request_usage(
            self.model, input_tokens=spent.input_tokens, output_tokens=spent.output_tokens,
            cache_read_tokens=spent.cache_read_tokens, cache_write_tokens=spent.cache_write_tokens))

    async def aclose(self) -> None:
        return None

    def _next(self, request: ScriptedRequest) -> Scripted:
        if self.replies:
            return self.replies.popleft()
        if self.respond is not None:
            return self._scripted(self.respond(request))
        raise AssertionError(f"the script has no reply left for request {len(self.requests)}")

    def _scripted(self, response: Reply | ModelError) -> Scripted:
        if isinstance(response, ModelError):
            return Scripted(response)
        usage = {"input_tokens": 10, "output_tokens": 5, **(response.usage or {})}
        spent = RequestUsage(usage["input_tokens"], usage["output_tokens"], usage.get("cache_read_input_tokens", 0),
                             usage.get("cache_creation_input_tokens", 0))
        content = [_content(block) for block in response.blocks]
        return Scripted(ModelReply(content, response.stop_reason or "end_turn", spent), delay_s=response.delay_s)


def _content(block: Block) -> dict[str, Any]:
    if block.kind == "text" and not block.citations:
        return text_block(block.text)
    if block.kind == "tool_use" and block.raw_input is None:
        return tool_use_block(block.name, block.input, block.id)
    raise ValueError(f"a {block.kind} block is the wire's subject: script it on the fake Messages API (`api`)")


def refusal() -> ModelError:
    """The error the real client raises for a request the server refused with a 400."""
    return ModelError(ErrorKind.BAD_REQUEST, "the model server rejected the request (400: a scripted refusal)", status=400)


def text_block(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def tool_use_block(name: str, arguments: dict[str, Any], call_id: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": arguments}
