"""Helpers for the ACP tests: the official ACP Python SDK as the client of a `tuiagent acp` subprocess, or of the same
serving code run in the test's own process on a pair of pipes."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION
from acp.client.connection import ClientSideConnection
from acp.schema import (AllowedOutcome, ClientCapabilities, DeniedOutcome, FileSystemCapabilities,
                        ReadTextFileResponse, RequestPermissionResponse)
from acp.stdio import spawn_agent_process


class RecordingClient:
    """An ACP client that records every session/update and answers request_permission with `answer` (an option id,
    or None for "cancelled"); `asked` is set when the first request arrives."""

    def __init__(self, answer: str | None = "allow_once") -> None:
        self.answer = answer
        self.updates: list[Any] = []
        self.permission_requests: list[Any] = []
        self.asked = asyncio.Event()
        self.buffers: dict[str, str] = {}
        self.buffer_reads: list[str] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)

    async def request_permission(self, session_id: str, tool_call: Any, options: list[Any],
                                 **kwargs: Any) -> RequestPermissionResponse:
        self.permission_requests.append((tool_call, options))
        self.asked.set()
        if self.answer is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=self.answer))

    async def read_text_file(self, session_id: str, path: str, line: int | None = None, limit: int | None = None,
                             **kwargs: Any) -> ReadTextFileResponse:
        """The editor's buffer of `path` (`buffers`), else the file on disk, as an editor answers."""
        self.buffer_reads.append(path)
        return ReadTextFileResponse(content=self.buffers.get(path) or Path(path).read_text())

    def on_connect(self, conn: Any) -> None:
        pass

    def kinds(self) -> list[str]:
        return [update.session_update for update in self.updates]


def agent_command(repo: Path, *flags: str) -> list[str]:
    return [sys.executable, "-m", "tui_agent.cli", "--project", str(repo), "acp", *flags]


async def _pipe() -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Both ends of an OS pipe as asyncio streams (bytes really cross it, as they cross a process's stdin)."""
    from tui_agent.acp.serve import LINE_LIMIT

    loop = asyncio.get_running_loop()
    read_fd, write_fd = os.pipe()
    reader = asyncio.StreamReader(limit=LINE_LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(read_fd, "rb", buffering=0))
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin,
                                                        os.fdopen(write_fd, "wb", buffering=0))
    return reader, asyncio.StreamWriter(transport, protocol, None, loop)


async def _initialized(connection: ClientSideConnection, reads_buffers: bool) -> ClientSideConnection:
    capabilities = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=reads_buffers))
    answer = await asyncio.wait_for(connection.initialize(protocol_version=PROTOCOL_VERSION,
                                                          client_capabilities=capabilities), 60)
    assert answer.protocol_version == PROTOCOL_VERSION
    return connection


@asynccontextmanager
async def acp_agent_in_process(repo: Path, client: RecordingClient, *,
                               reads_buffers: bool = False) -> AsyncIterator[ClientSideConnection]:
    """`tuiagent acp`'s serving code (`serve`, what `serve_stdio` runs) in this process, the SDK's client on the other
    ends of two pipes, with `initialize` done; closing the client ends it as an editor closing its stdin does. For tests
    whose subject is what the agent does, not its process: a process start and the runtime's imports cost seconds."""
    from tui_agent.acp.agent import AcpOptions
    from tui_agent.acp.serve import serve

    agent_reader, client_writer = await _pipe()
    client_reader, agent_writer = await _pipe()
    serving = asyncio.create_task(serve(AcpOptions(project=repo.resolve()), agent_reader, agent_writer))
    connection = ClientSideConnection(client, client_writer, client_reader)
    try:
        yield await _initialized(connection, reads_buffers)
    finally:
        await connection.close()
        client_writer.close()
        try:
            await asyncio.wait_for(serving, 60)  # the agent closed its sessions (runtimes, sandboxes, servers)
        finally:
            agent_writer.close()


@asynccontextmanager
async def acp_agent(repo: Path, client: RecordingClient, *flags: str,
                    reads_buffers: bool = False) -> AsyncIterator[ClientSideConnection]:
    """`tuiagent acp` spawned by the SDK (the environment: the fake API's address, the trusted test folders), with
    `initialize` done."""
    command = agent_command(repo, *flags)
    async with spawn_agent_process(client, command[0], *command[1:], env=dict(os.environ), cwd=str(repo),
                                   transport_kwargs={"stderr": None}) as (connection, _process):
        yield await _initialized(connection, reads_buffers)


__all__ = ["RecordingClient", "acp_agent", "acp_agent_in_process", "agent_command"]
