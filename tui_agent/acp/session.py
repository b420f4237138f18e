"""One ACP session: a runtime opened on the project, its prompts run as turns, streamed as `session/update`s."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from acp import RequestError, update_agent_message_text, update_agent_thought_text
from acp.schema import SessionMode, SessionModeState, StopReason

from tui_agent.core.slashline import parse_slash
from tui_agent.acp import commands
from tui_agent.acp.approvals import AcpApprovals
from tui_agent.acp.updates import EventMapper
from tui_agent.core.agent.permissions import PERMISSION_MODES
from tui_agent.core.runtime_state import mcp_of

if TYPE_CHECKING:
    from acp.interfaces import Client

    from tui_agent.core.agent.loop import Agent
    from tui_agent.core.mcp.config import ServerConfig
    from tui_agent.core.mcp.hub import McpHub
    from tui_agent.core.runtime import Runtime

log = logging.getLogger(__name__)
MODE_NAMES = {"ask": ("Ask", "ask before shell commands, writes outside .agent/ and network calls"),
              "auto": ("Accept edits", "file edits are accepted; shell commands and network calls are asked about"),
              "read-only": ("Read-only", "nothing is changed and no command runs: read and search"),
              "plan": ("Plan", "read-only until the agent proposes a plan and you approve it; then back to ask")}


def modes(current: str) -> SessionModeState:
    return SessionModeState(current_mode_id=current, available_modes=[
        SessionMode(id=mode, name=MODE_NAMES[mode][0], description=MODE_NAMES[mode][1]) for mode in PERMISSION_MODES])


class AcpSession:
    """Runs one prompt at a time on the runtime's agent; `cancel()` stops the running turn and its sandboxed
    processes (the agent's own cancellation), and that prompt answers stopReason "cancelled"."""

    def __init__(self, runtime: Runtime, agent: Agent, client: Client, approvals: AcpApprovals) -> None:
        self.runtime = runtime
        self.agent = agent
        self.client = client
        self.approvals = approvals
        self.session_id = agent.session_id
        approvals.client, approvals.session_id = client, self.session_id
        self._turn: asyncio.Task[StopReason] | None = None
        self._announcing: asyncio.Task[None] | None = None
        self._untold = list(runtime.core.problems)
        """What the project's opening found (an untrusted project, a tool that failed): told with the first prompt."""
        self.hub: McpHub | None = None
        """The MCP servers the client named in session/new (the project's own are the runtime's)."""

    async def add_servers(self, configs: list[ServerConfig]) -> None:
        """Start the client's stdio and HTTP MCP servers (a name the project configures too is skipped, with a warning)."""
        if not configs:
            return
        from tui_agent.core.mcp.agent_tools import McpToolProvider
        from tui_agent.core.mcp.hub import McpHub

        hub = mcp_of(self.runtime)
        taken = set(hub.connections) if hub is not None else set()
        problems = [f"MCP server {c.name!r} is configured by the project already; skipped" for c in configs if c.name in taken]
        self.hub = await McpHub.start_given(self.runtime.core.project, [c for c in configs if c.name not in taken], problems)
        for line in self.hub.failures():
            log.warning("%s", line)
        if self.hub.connections:
            self.agent.tool_providers.append(McpToolProvider(self.hub))

    def announce_commands(self, delay_s: float = 0.1) -> None:
        """available_commands_update, sent just after the session/new (or load) answer has gone out."""

        async def send() -> None:
            await asyncio.sleep(delay_s)
            await self.client.session_update(session_id=self.session_id, update=commands.available(self.runtime))

        self._announcing = asyncio.get_running_loop().create_task(send())

    async def prompt(self, text: str) -> StopReason:
        if self._turn is not None and not self._turn.done():
            raise RequestError.invalid_request({"message": "a prompt is already running in this session: wait for "
                                                           "it, or send session/cancel"})
        slash = parse_slash(text)
        if slash is not None and commands.known(self.runtime, slash) and slash.name != "init":
            reply = await commands.run_without_model(self.runtime, slash)
            await self.client.session_update(session_id=self.session_id, update=update_agent_message_text(reply))
            return "end_turn"
        if slash is not None and slash.name == "init":
            text = commands.init_text(slash)
        self._turn = asyncio.create_task(self._run(text))
        try:
            return await asyncio.shield(self._turn)
        except asyncio.CancelledError:  # the connection closed under the prompt: the turn goes with it
            self._turn.cancel()
            await asyncio.gather(self._turn, return_exceptions=True)
            raise

    async def _run(self, text: str) -> StopReason:
        mapper = EventMapper(self.agent.project.root)
        self.approvals.mapper = mapper
        untold, self._untold = self._untold, []
        for problem in untold:
            await self.client.session_update(session_id=self.session_id,
                                             update=update_agent_thought_text(f"[warning] {problem}\n"))
        try:
            async for event in self.agent.run_turn(text):
                for update in mapper.updates(event):
                    await self.client.session_update(session_id=self.session_id, update=update)
        except asyncio.CancelledError:
            return "cancelled"
        if mapper.failure is not None:
            raise RequestError.internal_error({"message": mapper.failure})
        return mapper.stop or "end_turn"

    async def cancel(self) -> None:
        """session/cancel: the turn's task is cancelled, which kills what it runs in the sandbox."""
        turn = self._turn
        if turn is not None and not turn.done():
            turn.cancel()
            await asyncio.gather(turn, return_exceptions=True)

    def set_mode(self, mode: str) -> None:
        if mode not in PERMISSION_MODES:
            raise RequestError.invalid_params({"message": f"unknown mode {mode!r}: one of {', '.join(PERMISSION_MODES)}"})
        self.agent.permissions.set_mode(mode)

    async def aclose(self) -> None:
        if self._announcing is not None:
            self._announcing.cancel()
        await self.cancel()
        if self.hub is not None:
            await self.hub.aclose()
        await self.runtime.aclose()
