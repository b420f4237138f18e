"""A local HTTP server speaking the Anthropic Messages API, for tests: scripted replies, strict checks, a prompt cache.

    with FakeMessagesAPI() as api:                       # 127.0.0.1, free port, own thread, strict
        api.enqueue(reply(text("Looking."), tool_use("read_file", {"path": "README.md"})))
        api.enqueue(http_error(429), reply(text("Done.")))
        api.respond_with(lambda request: reply(text(f"{len(request.messages)} messages")))
        client = AsyncAnthropic(api_key="test", base_url=api.base_url)
        ...
        api.requests[0].tool_names, api.requests[-1].tool_results(), api.cache_log[-1].read

Modules: script (the kinds of response), recorded (RecordedRequest), validator (the strict 400 rules),
cache (the prompt-cache model), sse (frames), server (FakeMessagesAPI).
"""

from tests.fake_api.cache import CacheUsage, PromptCache, prompt_blocks
from tests.fake_api.recorded import RecordedRequest
from tests.fake_api.script import (
    ERROR_TYPES, Block, CutStream, HttpError, MidStreamError, Reply, Response, cut_stream, http_error, load_script,
    mid_stream_error, redacted_thinking, reply, response_from_json, text, thinking, tool_use, tool_use_raw,
    web_search, cited_text,
)
from tests.fake_api.server import FakeMessagesAPI, InvalidRequestsSent

__all__ = [
    "ERROR_TYPES", "Block", "CacheUsage", "CutStream", "FakeMessagesAPI", "HttpError", "InvalidRequestsSent", "MidStreamError",
    "PromptCache", "RecordedRequest", "Reply", "Response", "cut_stream", "http_error", "load_script", "mid_stream_error",
    "prompt_blocks", "redacted_thinking", "reply", "response_from_json", "text", "thinking", "tool_use", "tool_use_raw",
    "web_search", "cited_text",
]
