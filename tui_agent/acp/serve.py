"""Serve the ACP agent on stdin/stdout until the client closes stdin; stdout carries nothing but the protocol."""

from __future__ import annotations

import asyncio
import os
import sys
from typing import cast

from acp import Agent, run_agent

from tui_agent.acp.agent import AcpOptions, TuiAgentAcp

LINE_LIMIT = 50 * 1024 * 1024
"""The longest message line read (the SDK's own default: prompts may embed whole files)."""


async def _streams() -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """stdin, and the protocol's own copy of stdout; file descriptor 1 then points at stderr, so nothing else this
    process or a child prints (a library's stray print, a subprocess without its own pipe) can break a message."""
    loop = asyncio.get_running_loop()
    protocol_fd = os.dup(sys.stdout.fileno())
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    reader = asyncio.StreamReader(limit=LINE_LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin,
                                                        os.fdopen(protocol_fd, "wb", buffering=0))
    return reader, asyncio.StreamWriter(transport, protocol, None, loop)


async def serve_stdio(options: AcpOptions) -> None:
    reader, writer = await _streams()
    await serve(options, reader, writer)


async def serve(options: AcpOptions, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """The agent on a pair of streams until the client closes its end (stdio in `tuiagent acp`; tests use pipes)."""
    agent = TuiAgentAcp(options)
    try:
        await run_agent(cast(Agent, agent), writer, reader)  # the methods it lacks are answered method_not_found
    finally:
        await agent.aclose()
