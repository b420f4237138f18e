"""The streamable-HTTP transport of an MCP server listed with a `url`: the SDK's client, with the configured headers."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
from mcp.client.streamable_http import streamable_http_client

CONNECT_TIMEOUT_S = 30.0
READ_TIMEOUT_S = 300.0
"""As the SDK's own client: a server may hold a response stream open for a long call."""


@asynccontextmanager
async def http_transport(url: str, headers: dict[str, str]) -> AsyncIterator[tuple[Any, Any]]:
    """(read, write) streams of a session with the server at `url`; the HTTP client is closed on exit."""
    timeout = httpx2.Timeout(CONNECT_TIMEOUT_S, read=READ_TIMEOUT_S)
    async with httpx2.AsyncClient(headers=headers, timeout=timeout, follow_redirects=False) as client:
        async with streamable_http_client(url, http_client=client) as (read, write):
            yield read, write
