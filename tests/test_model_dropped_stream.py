"""A connection dropped (reset) after the model's reply had started is said as such, "connection dropped mid-reply",
and retried; never "cannot reach the model server" (it was reached)."""

from __future__ import annotations

import json
import socket
import struct
import threading
from collections.abc import Iterator

import pytest

from tui_agent.core.agent.model import ModelClient, ModelError
from tui_agent.core.events import Notice, TextDelta


def sse(kind: str, data: dict[str, object]) -> bytes:
    return f"event: {kind}\ndata: {json.dumps(data)}\n\n".encode()


START = (sse("message_start", {"type": "message_start", "message": {
    "id": "msg_1", "type": "message", "role": "assistant", "model": "m", "content": [], "stop_reason": None,
    "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 0}}})
    + sse("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})
    + sse("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Half a sen"}}))


@pytest.fixture
def resetting_server() -> Iterator[str]:
    """Answers every request with the start of a stream, then resets the connection (RST, not a clean close)."""
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                continue
            with connection:
                connection.recv(65536)
                connection.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                                   b"transfer-encoding: chunked\r\n\r\n" + f"{len(START):x}\r\n".encode() + START + b"\r\n")
                stop.wait(0.5)  # the client reads the answer first: a reset before that would discard it unread
                connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    stop.set()
    thread.join(2)
    listener.close()


async def test_a_reset_mid_reply_says_the_connection_dropped_and_retries(resetting_server: str) -> None:
    client = ModelClient(model="m", api_key="k", base_url=resetting_server, max_retries=1, retry_base_delay_s=0.01)
    events: list[object] = []
    with pytest.raises(ModelError) as failure:
        async for event in client.stream_reply(system=[], tools=[], messages=[{"role": "user", "content": "hi"}]):
            events.append(event)
    await client.aclose()
    notices = [event.message for event in events if isinstance(event, Notice)]
    assert any(message.startswith("connection dropped mid-reply") and "retrying (1/1)" in message for message in notices), notices
    assert "connection dropped mid-reply" in failure.value.message and "cannot reach" not in failure.value.message
    assert any(isinstance(event, TextDelta) for event in events)
