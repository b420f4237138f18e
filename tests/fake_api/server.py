"""The fake Messages API server: scripted responses over HTTP (JSON and SSE), strict request checks, the prompt cache."""

from __future__ import annotations

import dataclasses
import json
import threading
import time
from collections import deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.fake_api import search_rules, thinking_rules as thinking, validator
from tests.fake_api.cache import CacheUsage, PromptCache
from tests.fake_api.recorded import RecordedRequest
from tests.fake_api.script import SEARCH_KINDS, CutStream, HttpError, MidStreamError, Reply, Response, http_error, next_id
from tests.fake_api.sse import block_events, block_json, output_tokens, sse


_POLL_S = 0.01


class InvalidRequestsSent(AssertionError):
    """The client sent requests the real API would refuse with a 400 (strict mode)."""


class FakeMessagesAPI:
    """The scripted Messages API server; see tests/fake_messages_api.py for how to use it.

    Strict (the default): a request breaking the documented rules gets the real API's 400 and is kept in
    `violations`; leaving the `with` block (or `stop()`) then raises InvalidRequestsSent so the test fails,
    unless the test took them with `take_violations()`.
    """

    def __init__(self, *, api_key: str | None = None, host: str = "127.0.0.1", port: int = 0,
                 repeat_last: Response | None = None, strict: bool = True,
                 on_violation: Callable[[str], None] | None = None) -> None:
        self.required_api_key = api_key
        self.models: list[str] = []  # what GET /v1/models lists (empty: the route answers 404, like servers without it)
        self.strict = strict
        self.on_violation = on_violation  # told each refusal as it happens (the script mode prints it)
        self.requests: list[RecordedRequest] = []
        self.violations: list[tuple[RecordedRequest, str]] = []
        self.cache = PromptCache()
        self.thinking_ledger = thinking.ThinkingLedger()  # tool_use ids sent in replies that thought
        self._usage: dict[int, CacheUsage] = {}  # by id() of a request kept in self.requests
        self._queue: deque[Response] = deque()
        self._callback: Callable[[RecordedRequest], Response] | None = None
        self._repeat_last = repeat_last
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer((host, port), _handler_class(self))
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None
        self.request_log: str | None = None
        self.body_log: str | None = None  # each request's JSON body, one line each
        """A file getting one line per request received (script mode's --log), for timing from another process."""

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> "FakeMessagesAPI":
        # shutdown() waits for the serving loop to notice, which it does once per poll interval (0.5 s by default)
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": _POLL_S},
                                        name="fake-messages-api", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self.check_no_violations()

    def serve_forever(self) -> None:
        try:
            self._server.serve_forever()
        finally:
            self._server.server_close()

    def __enter__(self) -> "FakeMessagesAPI":
        return self.start()

    def __exit__(self, exc_type: object, *exc_info: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        if exc_type is None:
            self.check_no_violations()

    def check_no_violations(self) -> None:
        with self._lock:
            violations, self.violations = list(self.violations), []
        if violations:
            lines = "\n".join(f"- request {self.requests.index(request)}: {message}" for request, message in violations)
            raise InvalidRequestsSent(f"the client sent {len(violations)} request(s) the real Messages API would refuse:\n{lines}")

    def take_violations(self) -> list[str]:
        """The 400 messages sent so far (and forget them, so the test does not fail on them)."""
        with self._lock:
            taken, self.violations = [message for _, message in self.violations], []
        return taken

    @property
    def cache_log(self) -> list[CacheUsage]:
        return self.cache.log

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

    def _admit(self, request: RecordedRequest) -> HttpError | None:
        """Record the request; a 400 when strict mode refuses it, else None (and the cache accounts for it)."""
        with self._lock:
            self.requests.append(request)
            if self.request_log is not None:
                with open(self.request_log, "a", encoding="utf-8") as log:
                    log.write(f"{time.time()} {request.path}\n")
            if self.body_log is not None:
                with open(self.body_log, "a", encoding="utf-8") as log:
                    log.write(json.dumps(request.body) + "\n")
            found = validator.problems(request.body, self.thinking_ledger) if self.strict else []
            if found:
                self.violations.append((request, found[0]))
                if self.on_violation is not None:
                    self.on_violation(found[0])
                return http_error(400, "invalid_request_error", found[0])
            self._usage[id(request)] = self.cache.account(request.body)
        return None

    def _next_response(self, request: RecordedRequest) -> Response:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        if self._callback is not None:
            return self._callback(request)
        if self._repeat_last is not None:
            return self._repeat_last
        return http_error(400, message="fake server: no scripted response left")

    def usage_for(self, request: RecordedRequest, blocks: Any, override: dict[str, int] | None) -> dict[str, int]:
        cache = self._usage.get(id(request), CacheUsage(0, 0, 1, 0))
        usage = {"input_tokens": cache.uncached, "output_tokens": output_tokens(blocks),
                 "cache_creation_input_tokens": cache.write, "cache_read_input_tokens": cache.read}
        usage.update(override or {})
        return usage


def _as_sent(api: FakeMessagesAPI, request: RecordedRequest, response: Response) -> Response:
    """Thinking blocks go out only when the request enables thinking (as the real API); the ledger notes the calls
    of a reply that thought."""
    if isinstance(response, (Reply, CutStream)):
        blocks = response.blocks
    elif isinstance(response, MidStreamError):
        blocks = response.blocks_before
    else:
        return response
    if any(block.kind in SEARCH_KINDS for block in blocks) and not search_rules.offered(request.body):
        return http_error(400, message="fake server: the script answers with a web search, but the request offers no "
                                       "web_search tool (the real API never would)")
    if not thinking.enabled(request.body):
        kept = tuple(block for block in blocks if block.kind not in ("thinking", "redacted_thinking"))
        if isinstance(response, MidStreamError):
            return dataclasses.replace(response, blocks_before=kept)
        return dataclasses.replace(response, blocks=kept)
    if blocks and blocks[0].kind in ("thinking", "redacted_thinking"):
        api.thinking_ledger.record([block.id for block in blocks if block.kind == "tool_use"])
    return response


def _handler_class(api: FakeMessagesAPI) -> type[BaseHTTPRequestHandler]:
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
            refusal = api._admit(request)
            response = refusal or _as_sent(api, request, api._next_response(request))
            try:
                if isinstance(response, HttpError):
                    self._send_error(response)
                elif body.get("stream"):
                    self._send_stream(request, response)
                else:
                    self._send_json_message(request, response)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client went away (cancelled); nothing to answer

        def do_GET(self) -> None:
            if not self.path.split("?")[0].endswith("/v1/models") or not api.models:
                self._send_error(http_error(404, message=f"fake server: no route {self.path}"))
                return
            data = [{"type": "model", "id": name, "display_name": name, "created_at": "2026-01-01T00:00:00Z"} for name in api.models]
            payload = json.dumps({"data": data, "has_more": False, "first_id": data[0]["id"], "last_id": data[-1]["id"]}).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def _send_error(self, error: HttpError) -> None:
            payload = json.dumps({"type": "error", "error": {"type": error.error_type, "message": error.message},
                                  "request_id": next_id("req")}).encode()
            self.send_response(error.status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            for name, value in error.headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)

        def _message_start(self, request: RecordedRequest, blocks: Any, usage: dict[str, int] | None) -> dict[str, Any]:
            return {"id": next_id("msg"), "type": "message", "role": "assistant", "model": request.body.get("model", "fake-model"),
                    "content": [], "stop_reason": None, "stop_sequence": None, "usage": api.usage_for(request, blocks, usage)}

        def _send_stream(self, request: RecordedRequest, response: Reply | MidStreamError | CutStream) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.end_headers()
            blocks = response.blocks_before if isinstance(response, MidStreamError) else response.blocks
            usage_override = response.usage if isinstance(response, Reply) else None
            delay = response.delay_s if isinstance(response, Reply) else 0.0
            start = self._message_start(request, blocks, usage_override)
            self._write(sse("message_start", {"type": "message_start", "message": {**start, "usage": {**start["usage"], "output_tokens": 1}}}))
            self._write(sse("ping", {"type": "ping"}))
            for index, block in enumerate(blocks):
                cut = response.cut_chars if isinstance(response, CutStream) and index == len(blocks) - 1 else None
                for frame in block_events(index, block, cut):
                    self._write(frame)
                    if delay:
                        time.sleep(delay)
            if isinstance(response, MidStreamError):
                self._write(sse("error", {"type": "error", "error": {"type": response.error_type, "message": response.message}}))
                return
            if isinstance(response, CutStream):
                return  # the connection closes here: no message_delta, no message_stop
            self._write(sse("message_delta", {"type": "message_delta", "delta": {"stop_reason": response.stop_reason, "stop_sequence": None},
                                              "usage": {"output_tokens": start["usage"]["output_tokens"]}}))
            self._write(sse("message_stop", {"type": "message_stop"}))

        def _send_json_message(self, request: RecordedRequest, response: Reply | MidStreamError | CutStream) -> None:
            if not isinstance(response, Reply):
                self._send_error(http_error(529, "overloaded_error", "Overloaded"))
                return
            message = self._message_start(request, response.blocks, response.usage)
            message.update(content=[block_json(b) for b in response.blocks], stop_reason=response.stop_reason)
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
