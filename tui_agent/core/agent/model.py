"""The Messages API client: streaming with AsyncAnthropic, retries (tenacity) announced, clear errors, usage and cost."""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any, cast

import tenacity

from tui_agent.core.agent import tls_early
from tui_agent.core.agent.pricing import RequestUsage, default_model, request_usage
from tui_agent.core.agent.streamreply import AssembledReply, ReplyAssembler, StreamCut
from tui_agent.core.bulkload import long_lived_objects
from tui_agent.core.content import ApiMessage, ContentBlock, TextBlock, ToolDefinition, ToolUseBlock
from tui_agent.core.agent.thinking import ThinkingConfig
from tui_agent.core.errors import ErrorKind, TuiAgentError
from tui_agent.core.events import Event, Notice, TextDelta, ThinkingDelta

if TYPE_CHECKING:
    import anthropic

DEFAULT_BASE_URL = "https://api.anthropic.com"
RETRYABLE_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
MAX_RETRY_AFTER_S = 60.0
CONNECTION_RETRIES = 2  # an unreachable server rarely comes back within seconds; say so quickly
TOO_LONG_MARKERS = ("prompt is too long", "too many tokens", "context length", "context window", "maximum context")
FINAL_KINDS = (ErrorKind.AUTH, ErrorKind.BAD_REQUEST, ErrorKind.CONTEXT_TOO_LONG, ErrorKind.API_ERROR)  # never retried
_sdk_imported = threading.Event()  # set once the first import (collection paused, then frozen) is complete


class ModelError(TuiAgentError):
    """A model request failed for good; `kind` says why (ErrorKind: auth, connection, context_too_long, ...)."""

    def __init__(self, kind: ErrorKind, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.kind = ErrorKind(kind)
        self.message = message
        self.status = status
        self.retry_after_s: float | None = None  # how long the server asked to wait before a retry


@dataclass(frozen=True)
class ModelReply:
    """One complete assistant message: its content blocks (as API dicts), stop reason and usage."""

    content: list[ContentBlock]
    stop_reason: str
    usage: RequestUsage
    invalid_inputs: dict[str, str] = field(default_factory=dict)  # tool_use id -> why its input JSON is unusable
    stop_sequence: str | None = None

    @property
    def text(self) -> str:
        return "".join(block["text"] for block in self.content if block["type"] == "text")

    @property
    def tool_uses(self) -> list[ToolUseBlock]:
        return [block for block in self.content if block["type"] == "tool_use"]


def sdk() -> ModuleType:
    """The `anthropic` SDK, imported on first use (about 3,000 modules: seconds on a busy machine)."""
    if _sdk_imported.is_set():
        import anthropic

        return anthropic
    with long_lived_objects():
        tls_early.start()  # the client's CA bundle loads on another core meanwhile
        import anthropic
    _sdk_imported.set()
    return anthropic


def configured_base_url(base_url: str | None = None) -> str:
    return (base_url or os.environ.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")


def configuration_hint() -> str:
    return (
        "Set ANTHROPIC_API_KEY to an Anthropic API key (https://console.anthropic.com/settings/keys), "
        "or ANTHROPIC_BASE_URL to a server that speaks the Messages API (Ollama, llama-server, vLLM, LiteLLM)."
    )


class ModelClient:
    """Streams assistant messages; retries 408/409/429/5xx/529, mid-stream errors and cut streams itself, with backoff."""

    def __init__(
        self,
        *,
        model: str | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        max_tokens: int = 8192,
        max_retries: int = 4,
        retry_base_delay_s: float = 1.0,
        timeout_s: float = 600.0,
    ) -> None:
        self.model = model or default_model()
        self.base_url = configured_base_url(base_url)
        self.max_tokens = max_tokens
        self.max_retries = max_retries
        self.retry_base_delay_s = retry_base_delay_s
        self.stream_listener: Callable[[Any], None] | None = None
        """Given every raw stream event as it arrives (headless stream-json: the message id, the API's usage, and
        --include-partial-messages); it must not raise."""
        self.answered = asyncio.Event()
        """Set once the server has answered a request (what waits for the first prompt to be on its way)."""
        key = api_key or os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN")
        # A local server behind ANTHROPIC_BASE_URL usually needs no key; the SDK still wants a value.
        anthropic = sdk()
        self._client = anthropic.AsyncAnthropic(
            api_key=key or "no-key-configured", base_url=self.base_url, max_retries=0, timeout=timeout_s,
            http_client=tls_early.http_client(anthropic, timeout_s),
        )

    async def aclose(self) -> None:
        await self._client.close()

    async def server_models(self) -> list[str]:
        """The model ids the server lists (GET /v1/models); raises the SDK's error when it has no such list."""
        page = await self._client.models.list(limit=100)
        return [model.id for model in page.data]

    async def stream_reply(
        self, *, system: list[TextBlock], tools: list[ToolDefinition], messages: list[ApiMessage],
        thinking: ThinkingConfig | None = None,
    ) -> AsyncIterator[Event | ModelReply]:
        """Yield TextDelta, ThinkingDelta and Notice events as they arrive, then the final ModelReply; raise ModelError.
        `thinking` None sends no thinking parameter (the model's default). tenacity decides whether, when and how often
        a failed request is retried; each retry is announced first."""
        extra, max_tokens = thinking.request_params(self.model, self.max_tokens) if thinking is not None else ({}, self.max_tokens)
        request = {"model": self.model, "max_tokens": max_tokens, "stream": True, "system": cast(Any, system),
                   "tools": cast(Any, tools), "messages": cast(Any, messages),
                   "extra_body": extra or None}  # thinking / output_config: the same wire shape with any SDK version
        shown: list[str] = [""]  # text already shown to the person in this request, across attempts
        upcoming: list[tuple[ModelError, int, float]] = []  # the failure, its attempt, the wait before the next one
        async for attempt in self._retrying(upcoming.append):
            if upcoming:
                failure, failed_attempt, delay = upcoming.pop()
                yield Notice(f"{failure.message} — retrying ({failed_attempt}/{self._retries(failure)}) in {delay:.1f}s",
                             "warning")
                await asyncio.sleep(delay)
            try:
                async with contextlib.aclosing(self._attempt(request, shown)) as items:
                    async for item in items:
                        yield item
                return
            except ModelError as failure:
                attempt.retry_state.set_exception((type(failure), failure, failure.__traceback__))

    def _retrying(self, announce: Callable[[tuple[ModelError, int, float]], None]) -> tenacity.AsyncRetrying:
        """The retry policy: transient failures only, `max_retries` of them (fewer for an unreachable server), after
        the server's retry-after or an exponential backoff with jitter; `announce` gets each retry, whose caller
        says it and then waits."""
        backoff = tenacity.wait_exponential_jitter(multiplier=self.retry_base_delay_s, max=MAX_RETRY_AFTER_S,
                                                   jitter=self.retry_base_delay_s / 4)

        def wait(state: tenacity.RetryCallState) -> float:
            failure = state.outcome.exception() if state.outcome else None
            hint = failure.retry_after_s if isinstance(failure, ModelError) else None
            return hint if hint is not None else backoff(state)

        def stop(state: tenacity.RetryCallState) -> bool:
            failure = state.outcome.exception() if state.outcome else None
            return not isinstance(failure, ModelError) or state.attempt_number > self._retries(failure)

        def before_sleep(state: tenacity.RetryCallState) -> None:
            failure = state.outcome.exception() if state.outcome else None
            if isinstance(failure, ModelError):
                announce((failure, state.attempt_number, state.upcoming_sleep))

        async def announced_by_the_caller(_seconds: float) -> None:
            return None

        return tenacity.AsyncRetrying(
            retry=tenacity.retry_if_exception(lambda error: isinstance(error, ModelError) and error.kind not in FINAL_KINDS),
            stop=stop, wait=wait, before_sleep=before_sleep, sleep=announced_by_the_caller, reraise=True)

    def _retries(self, failure: ModelError) -> int:
        return min(self.max_retries, CONNECTION_RETRIES) if failure.kind is ErrorKind.CONNECTION else self.max_retries

    async def _attempt(self, request: dict[str, Any], shown: list[str]) -> AsyncGenerator[Event | ModelReply, None]:
        """One request: its events, then the ModelReply; raises ModelError. `shown[0]`: the text shown so far, which a
        retried reply continues (or replaces, with a notice, when it differs)."""
        anthropic = sdk()
        received = ""
        answered = False  # the server answered: a connection error from now on is a drop, not "cannot reach"
        try:
            assembler = ReplyAssembler()
            stream = await self._client.messages.create(**request)
            answered = True
            self.answered.set()
            try:
                async for event in stream:
                    if self.stream_listener is not None:
                        self.stream_listener(event)
                    received += assembler.feed(event)
                    if assembler.thinking:
                        yield ThinkingDelta(assembler.thinking)
                    if len(received) > len(shown[0]):
                        if not received.startswith(shown[0]):
                            yield Notice("the retried reply differs from the partial text shown above", "warning")
                            shown[0] = ""
                        new_text = received[len(shown[0]):]
                        shown[0] = received
                        yield TextDelta(new_text)
            finally:
                await stream.close()
            complete = self._reply(assembler.finish())
        except anthropic.APIStatusError as error:
            raise self._classify_status(error) from None
        except anthropic.APIConnectionError as error:
            raise (self._dropped(error) if answered else self._connection_error(error)) from None
        except Exception as error:  # a filter, not a catch: only a cut stream or the HTTP layer's errors are kept
            if not isinstance(error, StreamCut) and not _is_transport_error(error):
                raise
            raise ModelError(ErrorKind.INTERRUPTED, f"the model's reply was cut off before it was complete ({error})") from None
        yield complete

    def _reply(self, parts: AssembledReply) -> ModelReply:
        return ModelReply(
            content=parts.content,
            stop_reason=parts.stop_reason,
            usage=request_usage(
                self.model,
                input_tokens=parts.input_tokens,
                output_tokens=parts.output_tokens,
                cache_read_tokens=parts.cache_read_tokens,
                cache_write_tokens=parts.cache_write_tokens,
            ),
            invalid_inputs=parts.invalid_inputs,
            stop_sequence=parts.stop_sequence,
        )

    def _classify_status(self, error: anthropic.APIStatusError) -> ModelError:
        failure = self._status_failure(error)
        failure.retry_after_s = _retry_after(error.response)
        return failure

    def _status_failure(self, error: anthropic.APIStatusError) -> ModelError:
        status = error.status_code
        detail = _error_message(error)
        if status in (401, 403):
            return ModelError(
                ErrorKind.AUTH,
                f"The model server at {self.base_url} refused the credentials ({status}: {detail}). {configuration_hint()}",
                status=status,
            )
        if status == 413 or (status == 400 and any(marker in detail.lower() for marker in TOO_LONG_MARKERS)):
            return ModelError(ErrorKind.CONTEXT_TOO_LONG, f"the conversation is too long for the model ({detail})", status=status)
        if status == 200:  # an `event: error` frame inside a stream that had started fine
            return ModelError(ErrorKind.OVERLOADED, f"the model stream was interrupted ({detail})", status=status)
        if status == 429:
            return ModelError(ErrorKind.RATE_LIMIT, f"rate limited by {self.base_url} (429: {detail})", status=status)
        if status in RETRYABLE_STATUSES or status >= 500:
            return ModelError(ErrorKind.OVERLOADED, f"the model server had an error ({status}: {detail})", status=status)
        if status == 404:
            return ModelError(ErrorKind.BAD_REQUEST, f"{self.base_url} answered 404 for model {self.model!r} ({detail}); check --model or ANTHROPIC_BASE_URL", status=status)
        return ModelError(ErrorKind.BAD_REQUEST, f"the model server rejected the request ({status}: {detail})", status=status)

    def _connection_error(self, error: anthropic.APIConnectionError) -> ModelError:
        cause = error.__cause__ or error
        what = "timed out" if isinstance(error, sdk().APITimeoutError) else f"{type(cause).__name__}: {cause}"
        return ModelError(
            ErrorKind.CONNECTION,
            f"cannot reach the model server at {self.base_url} ({what}). Check your network connection, "
            "or set ANTHROPIC_BASE_URL to a reachable server.",
        )

    def _dropped(self, error: anthropic.APIConnectionError) -> ModelError:
        cause = error.__cause__ or error
        return ModelError(ErrorKind.CONNECTION, f"connection dropped mid-reply ({type(cause).__name__}{f': {cause}' if str(cause) else ''})")

def _retry_after(response: Any) -> float | None:
    """The server's retry-after (capped at a minute), or None when it sent none it could mean."""
    headers = response.headers if response is not None else {}
    try:
        if "retry-after-ms" in headers:
            return min(float(headers["retry-after-ms"]) / 1000, MAX_RETRY_AFTER_S)
        if "retry-after" in headers:
            return min(float(headers["retry-after"]), MAX_RETRY_AFTER_S)
    except ValueError:  # an unparseable retry-after header: the backoff decides
        pass
    return None


def _is_transport_error(error: BaseException) -> bool:
    """An error of the SDK's HTTP layer (httpx, or httpx2 in newer SDKs) raised while a stream was being read."""
    return type(error).__module__.split(".")[0] in ("httpx", "httpx2", "httpcore", "httpcore2")


def _error_message(error: anthropic.APIStatusError) -> str:
    body = error.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            kind = inner.get("type")
            return f"{kind}: {inner['message']}" if kind else str(inner["message"])
    return str(error.message)
