"""A local HTTP server speaking the Anthropic Messages API (JSON and SSE) from scripted responses, for tests.

Use in tests (the real `anthropic` SDK talks to it over HTTP):

    with FakeMessagesAPI() as api:                       # 127.0.0.1, free port, own thread
        api.enqueue(reply(text("Looking."), tool_use("read_file", {"path": "README.md"})))
        api.enqueue(http_error(429), reply(text("Done.")))
        api.respond_with(lambda request: reply(text(f"{len(request.messages)} messages")))
        client = AsyncAnthropic(api_key="test", base_url=api.base_url)
        ...
        api.requests[0].tool_names, api.requests[0].system_text, api.requests[-1].tool_results()

Responses are taken from the queue first; when it is empty the `respond_with` callback decides;
with neither, the server answers 400 "no scripted response left" so a test cannot pass by accident.

Kinds of response:
- `reply(*blocks, stop_reason=None, usage=None, delay_s=0.0)`: an assistant message, streamed as SSE
  (or returned as JSON when the request has no `"stream": true`); `text(...)` and `tool_use(...)` blocks.
- `http_error(status, error_type=None, message=None, headers=None)`: an error status with an error body.
- `mid_stream_error(*blocks_before, error_type="overloaded_error")`: a 200 SSE stream that sends the
  given blocks' events and then an `event: error` frame.

As a script (for driving a real terminal against it):

    python tests/fake_messages_api.py --script responses.json [--port N] [--api-key KEY]

where responses.json is a list of items: {"text": "..."}; {"content": [{"type": "text", "text": ...},
{"type": "tool_use", "name": ..., "input": {...}}], "delay_s": 0.05}; {"status": 429};
{"mid_stream_error": "overloaded_error", "content": [...]}; or {"repeat": {...}} as the last item to
answer every further request with that item. It prints `listening on http://127.0.0.1:PORT` and
serves until interrupted.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_ids = itertools.count(1)

ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


# ---------------------------------------------------------------- scripted responses


@dataclass(frozen=True)
class Block:
    """One content block of a scripted assistant message."""

    kind: str  # "text" | "tool_use"
    text: str = ""
    name: str = ""
    input: dict[str, Any] = field(default_factory=dict)
    id: str = ""


@dataclass(frozen=True)
class Reply:
    """A scripted assistant message."""

    blocks: tuple[Block, ...]
    stop_reason: str | None = None
    usage: dict[str, int] | None = None
    delay_s: float = 0.0


@dataclass(frozen=True)
class HttpError:
    """A scripted HTTP error status."""

    status: int
    error_type: str
    message: str
    headers: dict[str, str]


@dataclass(frozen=True)
class MidStreamError:
    """A 200 SSE stream that sends some blocks and then an `event: error` frame."""

    blocks_before: tuple[Block, ...]
    error_type: str
    message: str


Response = Reply | HttpError | MidStreamError


def text(value: str) -> Block:
    return Block(kind="text", text=value)


def tool_use(name: str, input: dict[str, Any] | None = None, id: str | None = None) -> Block:
    return Block(kind="tool_use", name=name, input=dict(input or {}), id=id or f"toolu_{next(_ids):06d}")


def reply(*blocks: Block, stop_reason: str | None = None, usage: dict[str, int] | None = None, delay_s: float = 0.0) -> Reply:
    if stop_reason is None:
        stop_reason = "tool_use" if any(b.kind == "tool_use" for b in blocks) else "end_turn"
    return Reply(blocks=tuple(blocks), stop_reason=stop_reason, usage=usage, delay_s=delay_s)


def http_error(status: int, error_type: str | None = None, message: str | None = None, headers: dict[str, str] | None = None) -> HttpError:
    default_headers = {"retry-after-ms": "1"} if status in (408, 409, 429) or status >= 500 else {}
    return HttpError(
        status=status,
        error_type=error_type or ERROR_TYPES.get(status, "api_error"),
        message=message or f"scripted {status}",
        headers={**default_headers, **(headers or {})},
    )


def mid_stream_error(*blocks_before: Block, error_type: str = "overloaded_error", message: str = "Overloaded") -> MidStreamError:
    return MidStreamError(blocks_before=tuple(blocks_before), error_type=error_type, message=message)


# ---------------------------------------------------------------- recorded requests


@dataclass(frozen=True)
class RecordedRequest:
    """One request the server received: path, headers (lower-cased names) and the parsed JSON body."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages", []))

    @property
    def tools(self) -> list[dict[str, Any]]:
        return list(self.body.get("tools", []))

    @property
    def tool_names(self) -> list[str]:
        return [tool.get("name", "") for tool in self.tools]

    def tool(self, name: str) -> dict[str, Any] | None:
        return next((tool for tool in self.tools if tool.get("name") == name), None)

    @property
    def system_text(self) -> str:
        system = self.body.get("system", "")
        if isinstance(system, str):
            return system
        return "\n".join(block.get("text", "") for block in system)

    @property
    def api_key(self) -> str | None:
        auth = self.headers.get("authorization", "")
        if auth.lower().startswith("bearer "):
            return auth[7:]
        return self.headers.get("x-api-key")

    def last_user_text(self) -> str:
        """The text of the last user message (string content or its text blocks)."""
        for message in reversed(self.messages):
            if message.get("role") != "user":
                continue
            content = message.get("content")
            if isinstance(content, str):
                return content
            texts = [block.get("text", "") for block in content if block.get("type") == "text"]
            if texts:
                return "\n".join(texts)
        return ""

    def tool_results(self) -> list[dict[str, Any]]:
        """The tool_result blocks of the last message (when it is a user message answering tool calls)."""
        if not self.messages:
            return []
        last = self.messages[-1]
        content = last.get("content")
        if last.get("role") != "user" or isinstance(content, str):
            return []
        return [block for block in content if block.get("type") == "tool_result"]

    def tool_result_text(self, index: int = 0) -> str:
        result = self.tool_results()[index]
        content = result.get("content", "")
        if isinstance(content, str):
            return content
        return "\n".join(block.get("text", "") for block in content if block.get("type") == "text")


# ---------------------------------------------------------------- SSE encoding


def _sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def _chunks(value: str, size: int) -> Iterator[str]:
    for start in range(0, len(value), size):
        yield value[start : start + size]


def _block_events(index: int, block: Block) -> Iterator[bytes]:
    if block.kind == "text":
        yield _sse("content_block_start", {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}})
        for piece in _chunks(block.text, 12) if block.text else [""]:
            yield _sse("content_block_delta", {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": piece}})
    else:
        start = {"type": "tool_use", "id": block.id, "name": block.name, "input": {}}
        yield _sse("content_block_start", {"type": "content_block_start", "index": index, "content_block": start})
        yield _sse("content_block_delta", {"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": ""}})
        for piece in _chunks(json.dumps(block.input), 16):
            yield _sse("content_block_delta", {"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": piece}})
    yield _sse("content_block_stop", {"type": "content_block_stop", "index": index})


def _block_json(block: Block) -> dict[str, Any]:
    if block.kind == "text":
        return {"type": "text", "text": block.text}
    return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}


def _usage(request: RecordedRequest, blocks: tuple[Block, ...], override: dict[str, int] | None) -> dict[str, int]:
    output_chars = sum(len(b.text) + len(json.dumps(b.input)) for b in blocks)
    usage = {
        "input_tokens": max(1, len(json.dumps(request.body)) // 4),
        "output_tokens": max(1, output_chars // 4),
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }
    usage.update(override or {})
    return usage


# ---------------------------------------------------------------- the server


class FakeMessagesAPI:
    """The scripted Messages API server; see the module docstring."""

    def __init__(self, *, api_key: str | None = None, host: str = "127.0.0.1", port: int = 0, repeat_last: Response | None = None) -> None:
        self.required_api_key = api_key
        self.requests: list[RecordedRequest] = []
        self._queue: deque[Response] = deque()
        self._callback: Callable[[RecordedRequest], Response] | None = None
        self._repeat_last = repeat_last
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer((host, port), self._handler_class())
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None
        self.request_log: str | None = None
        """A file getting one line per request received (script mode's --log), for timing from another process."""

    # -- lifecycle

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> "FakeMessagesAPI":
        self._thread = threading.Thread(target=self._server.serve_forever, name="fake-messages-api", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> "FakeMessagesAPI":
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- scripting

    def enqueue(self, *responses: Response) -> None:
        with self._lock:
            self._queue.extend(responses)

    def respond_with(self, callback: Callable[[RecordedRequest], Response] | None) -> None:
        """Decide responses from the request once the queue is empty (None to switch off)."""
        self._callback = callback

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    def _next_response(self, request: RecordedRequest) -> Response:
        with self._lock:
            self.requests.append(request)
            if self.request_log is not None:
                with open(self.request_log, "a", encoding="utf-8") as log:
                    log.write(f"{time.time()} {request.path}\n")
            if self._queue:
                return self._queue.popleft()
        if self._callback is not None:
            return self._callback(request)
        if self._repeat_last is not None:
            return self._repeat_last
        return http_error(400, message="fake server: no scripted response left")

    # -- HTTP

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    self._send_error(http_error(400, message="fake server: body is not JSON"))
                    return
                request = RecordedRequest(path=self.path, headers={k.lower(): v for k, v in self.headers.items()}, body=body)
                if not self.path.split("?")[0].endswith("/v1/messages"):
                    self._send_error(http_error(404, message=f"fake server: no route {self.path}"))
                    return
                if api.required_api_key is not None and request.api_key != api.required_api_key:
                    with api._lock:
                        api.requests.append(request)
                    self._send_error(http_error(401, message="invalid x-api-key"))
                    return
                response = api._next_response(request)
                try:
                    if isinstance(response, HttpError):
                        self._send_error(response)
                    elif body.get("stream"):
                        self._send_stream(request, response)
                    else:
                        self._send_json_message(request, response)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client went away (cancelled); nothing to answer

            def _send_error(self, error: HttpError) -> None:
                payload = json.dumps({"type": "error", "error": {"type": error.error_type, "message": error.message}}).encode()
                self.send_response(error.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                for name, value in error.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)

            def _message_start(self, request: RecordedRequest, blocks: tuple[Block, ...], usage: dict[str, int] | None) -> dict[str, Any]:
                return {
                    "id": f"msg_{next(_ids):06d}",
                    "type": "message",
                    "role": "assistant",
                    "model": request.body.get("model", "fake-model"),
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": _usage(request, blocks, usage),
                }

            def _send_stream(self, request: RecordedRequest, response: Reply | MidStreamError) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.end_headers()
                blocks = response.blocks if isinstance(response, Reply) else response.blocks_before
                usage_override = response.usage if isinstance(response, Reply) else None
                delay = response.delay_s if isinstance(response, Reply) else 0.0
                start = self._message_start(request, blocks, usage_override)
                self._write(_sse("message_start", {"type": "message_start", "message": {**start, "usage": {**start["usage"], "output_tokens": 1}}}))
                self._write(_sse("ping", {"type": "ping"}))
                for index, block in enumerate(blocks):
                    for frame in _block_events(index, block):
                        self._write(frame)
                        if delay:
                            time.sleep(delay)
                if isinstance(response, MidStreamError):
                    self._write(_sse("error", {"type": "error", "error": {"type": response.error_type, "message": response.message}}))
                    return
                self._write(_sse("message_delta", {"type": "message_delta", "delta": {"stop_reason": response.stop_reason, "stop_sequence": None}, "usage": {"output_tokens": start["usage"]["output_tokens"]}}))
                self._write(_sse("message_stop", {"type": "message_stop"}))

            def _send_json_message(self, request: RecordedRequest, response: Reply | MidStreamError) -> None:
                if isinstance(response, MidStreamError):
                    self._send_error(http_error(529, response.error_type, response.message))
                    return
                message = self._message_start(request, response.blocks, response.usage)
                message.update(content=[_block_json(b) for b in response.blocks], stop_reason=response.stop_reason)
                payload = json.dumps(message).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def _write(self, frame: bytes) -> None:
                self.wfile.write(frame)
                self.wfile.flush()

        return Handler


# ---------------------------------------------------------------- script mode


def response_from_json(item: dict[str, Any]) -> Response:
    """Build one scripted response from its JSON form (see the module docstring)."""
    if "status" in item:
        return http_error(int(item["status"]), item.get("error_type"), item.get("message"), item.get("headers"))
    blocks: list[Block] = []
    if "text" in item:
        blocks.append(text(str(item["text"])))
    for block in item.get("content", []):
        if block.get("type") == "tool_use":
            blocks.append(tool_use(block["name"], block.get("input", {}), block.get("id")))
        else:
            blocks.append(text(block.get("text", "")))
    if "mid_stream_error" in item:
        return mid_stream_error(*blocks, error_type=str(item["mid_stream_error"]))
    return reply(*blocks, stop_reason=item.get("stop_reason"), usage=item.get("usage"), delay_s=float(item.get("delay_s", 0.0)))


def load_script(items: list[dict[str, Any]]) -> tuple[list[Response], Response | None]:
    """The queue of responses and the optional response repeated once the queue is empty."""
    responses: list[Response] = []
    repeat: Response | None = None
    for item in items:
        if "repeat" in item:
            repeat = response_from_json(item["repeat"])
        else:
            responses.append(response_from_json(item))
    return responses, repeat


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="A scripted fake Anthropic Messages API server.")
    parser.add_argument("--script", required=True, help="JSON file: a list of responses")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--api-key", default=None, help="answer 401 unless this key is sent")
    parser.add_argument("--log", default=None, help="append one line to this file per request received")
    args = parser.parse_args(argv)
    with open(args.script, encoding="utf-8") as handle:
        responses, repeat = load_script(json.load(handle))
    api = FakeMessagesAPI(api_key=args.api_key, port=args.port, repeat_last=repeat)
    api.enqueue(*responses)
    api.request_log = args.log
    print(f"listening on {api.base_url}", flush=True)
    try:
        api._server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        api._server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
